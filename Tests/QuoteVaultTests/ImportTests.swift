import Foundation
import Logging
import PGClient
import Synchronization
import QuoteVault
import TestSupport
import XCTest

/// `quote-server seed` and `import`: validation with line numbers, idempotence, the bundled corpus.
final class ImportTests: XCTestCase {
    private func write(_ text: String, _ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func testCSVRowsAreValidatedWithTheirLineNumbers() async throws {
        let app = try await startTestApp()
        let csv = #"""
            text,author,category
            "Hello, ""world""",Ada Lovelace,wisdom
            ,No Text,love
            Valid   two,  Grace   Hopper ,HUMOR
            "Spans
            two lines",Someone,success
            Bad category,Someone,poetry
            \#(String(repeating: "x", count: 301)),Someone,love
            """#
        let records = try QuoteFileReader.read(try write(csv, "quotes.csv"))
        let report = try await QuoteImporter(pool: app.pool).importRecords(records)
        XCTAssertEqual(report.inserted, 3)
        XCTAssertEqual(report.rejected.map(\.line), [3, 7, 8])
        XCTAssertTrue(report.rejected[1].reason.contains("category"))
        let rows = try await app.withConnection { connection in
            try connection.query("SELECT text, author, category FROM quotes ORDER BY text").map {
                """
                \(try $0.decode("text", as: String.self))|\(try $0.decode("author", as: String.self))|\
                \(try $0.decode("category", as: String.self))
                """
            }
        }
        XCTAssertEqual(
            rows,
            ["Hello, \"world\"|Ada Lovelace|wisdom", "Spans two lines|Someone|success", "Valid two|Grace Hopper|humor"])
    }

    /// An import that is a tenth of the table or more leaves the planner's statistics up to date (before, a fresh
    /// install's searches were planned for an empty table until autovacuum came); a smaller one leaves them to it.
    func testAnImportThatChangesTheTableRefreshesItsStatistics() async throws {
        let app = try await startTestApp()
        func rowsAsPlanned() async throws -> Double {
            try await app.withConnection { connection in
                try connection.query("SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'quotes'::regclass")[0]
                    .decode("n", as: Double.self)
            }
        }
        let importer = QuoteImporter(pool: app.pool, deferral: .never)
        let first = (1...300).map {
            QuoteRecord(line: $0, text: "Planned quote \($0)", author: "Planner", category: "love")
        }
        let firstReport = try await importer.importRecords(first)
        XCTAssertEqual(firstReport.inserted, 300)
        let afterFirst = try await rowsAsPlanned()
        XCTAssertEqual(afterFirst, 300)
        let few = (1...20).map { QuoteRecord(line: $0, text: "A few more \($0)", author: "Planner", category: "love") }
        let fewReport = try await importer.importRecords(few)
        XCTAssertEqual(fewReport.inserted, 20)
        let afterFew = try await rowsAsPlanned()
        XCTAssertEqual(afterFew, 300, "20 rows into 300: left to autovacuum")
        let many = (1...40).map { QuoteRecord(line: $0, text: "Many more \($0)", author: "Planner", category: "love") }
        let manyReport = try await importer.importRecords(many)
        XCTAssertEqual(manyReport.inserted, 40)
        let afterMany = try await rowsAsPlanned()
        XCTAssertEqual(afterMany, 360)
    }

    func testJSONArrayReportsLinesAndSecondImportAddsNothing() async throws {
        let app = try await startTestApp()
        let json = """
            [
              {"text": "First", "author": "A", "category": "love"},
              {"text": "", "author": "B", "category": "love"},
              {"text": "Third", "author": "C",
               "category": "love"},
              42,
              {"text": "first", "author": "a", "category": "love"}
            ]
            """
        let file = try write(json, "quotes.json")
        let report = try await QuoteImporter(pool: app.pool).importRecords(try QuoteFileReader.read(file))
        XCTAssertEqual(report.rejected.map(\.line), [3, 6])
        XCTAssertEqual(report.inserted, 2)
        XCTAssertEqual(report.duplicates, 1, "same text and author differing only in case is a duplicate")
        let again = try await QuoteImporter(pool: app.pool).importRecords(try QuoteFileReader.read(file))
        XCTAssertEqual(again.inserted, 0)
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 2)
    }

    func testTheBundledCorpusSeedsThousandsOfRealQuotesOnce() async throws {
        let url = try TestDatabase.makeDatabase()
        let corpus = TestApp.repositoryRoot.appendingPathComponent("data/quotes.jsonl").path
        let env = ["DATABASE_URL": url]
        let first = try ServerProcess(["seed", "--corpus", corpus], environment: env)
        let firstStatus = try await first.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(firstStatus, 0, first.output)
        let second = try ServerProcess(["seed", "--corpus", corpus], environment: env)
        let secondStatus = try await second.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(secondStatus, 0, second.output)
        XCTAssertTrue(second.output.contains("\"inserted\":0"), second.output)
        let app = try await startTestApp(databaseURL: url)
        let counts = try app.client.get("/v1/categories").items()
        for entry in counts {
            XCTAssertGreaterThanOrEqual(entry["count"] as? Int ?? 0, 300, "\(entry)")
        }
        let total = counts.reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
        XCTAssertGreaterThan(total, 5000)
        let lengths = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT max(char_length(text))::int8 AS longest, \
                count(*) FILTER (WHERE author = '')::int8 AS anonymous FROM quotes
                """
            )[0]
        }
        XCTAssertLessThanOrEqual(try lengths.decode("longest", as: Int.self), 300)
        XCTAssertEqual(try lengths.decode("anonymous", as: Int.self), 0)
    }

    func testImportCommandReportsInvalidRowsAndKeepsValidOnes() async throws {
        let url = try TestDatabase.makeDatabase()
        let file = try write("text,author,category\nGood one,Someone,love\nNo author,,love\n", "cmd.csv")
        let process = try ServerProcess(["import", file.path], environment: ["DATABASE_URL": url])
        let status = try await process.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, process.output)
        XCTAssertTrue(process.output.contains("\"line\":3"), process.output)
        XCTAssertTrue(process.output.contains("\"inserted\":1"), process.output)
    }

    func testBatchesReportProgressAndAnInterruptedImportResumesAfterItsLastBatch() async throws {
        let app = try await TestApp.start()
        var records = (1...350).map {
            QuoteRecord(line: $0 + 1, text: "Quote\tnumber \\ \($0)", author: "Author", category: "love")
        }
        records.insert(QuoteRecord(line: 100, text: "", author: "Nobody", category: "love"), at: 50)
        struct Stop: Error {}
        let seen = Mutex<[ImportProgress]>([])
        let importer = QuoteImporter(pool: app.pool, batchSize: 100)
        do {
            _ = try await importer.importRecords(records) { progress in
                seen.withLock { $0.append(progress) }
                if progress.done == 200 { throw Stop() }  // cut short after two batches
            }
            XCTFail("the import should have stopped")
        } catch is Stop {}
        XCTAssertEqual(seen.withLock { $0.map(\.done) }, [100, 200])
        XCTAssertEqual(seen.withLock { $0.map(\.total) }, [350, 350])
        func count() async throws -> Int {
            try await app.withConnection {
                try $0.query("SELECT count(*)::int8 AS n FROM quotes")[0].decode("n", as: Int.self)
            }
        }
        let afterStop = try await count()
        XCTAssertEqual(afterStop, 200, "the committed batches stay")

        seen.withLock { $0.removeAll() }
        let report = try await importer.importRecords(records) { progress in seen.withLock { $0.append(progress) } }
        XCTAssertEqual(report.resumedAfter, 200, "resumed after the committed batches")
        XCTAssertEqual(report.inserted, 150)
        XCTAssertEqual(report.duplicates, 0)
        XCTAssertEqual(report.rejected.map { $0.line }, [100], "the same rejected rows, with their lines")
        XCTAssertEqual(seen.withLock { $0.map(\.done) }, [300, 350])
        XCTAssertEqual(seen.withLock { $0.map(\.doneNow) }, [100, 150])
        let afterResume = try await count()
        XCTAssertEqual(afterResume, 350)
        // The file's first row is the newest, across batches and runs; escaped characters arrive whole.
        let newest = try await app.withConnection { connection in
            try connection.query("SELECT text FROM quotes ORDER BY created_at DESC LIMIT 1")[0]
                .decode("text", as: String.self)
        }
        XCTAssertEqual(newest, "Quote number \\ 1", "whitespace collapsed, the backslash kept")
        // Finished: a third run starts afresh and finds every row already there.
        let again = try await importer.importRecords(records)
        XCTAssertNil(again.resumedAfter)
        XCTAssertEqual(again.inserted, 0)
        XCTAssertEqual(again.duplicates, 350)
        await app.stop()
    }

    /// `quote-server import` as a person runs it: a progress line on the terminal; Ctrl-C stops it after a committed
    /// batch and says so; run again, it resumes there and reports the same rejected rows.
    func testImportCommandShowsProgressOnATerminalAndResumesAfterCtrlC() async throws {
        let url = try TestDatabase.makeDatabase()
        var lines = (1...30_000).map {
            #"{"text": "Imported quote \#($0)", "author": "Author \#($0 % 50)", "category": "wisdom"}"#
        }
        lines.insert(#"{"text": "", "author": "Nobody", "category": "wisdom"}"#, at: 100)  // line 101
        let file = try write(lines.joined(separator: "\n") + "\n", "quotes.jsonl")
        let first = try ServerProcess(["import", file.path], environment: ["DATABASE_URL": url], terminal: true)
        let deadline = ContinuousClock.now + .seconds(300)
        while !first.terminalOutput().contains(" / 30000 rows"), try first.poll() == nil,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        if try first.poll() == nil { first.signal(SIGINT) }
        let firstStatus = try await first.waitForExit(timeout: .seconds(300))
        // Logs go to stderr too: here, the terminal.
        let terminal = first.terminalOutput()
        XCTAssertEqual(firstStatus, 128 + SIGINT, terminal)
        XCTAssertTrue(terminal.contains("10000 / 30000 rows"), terminal)
        XCTAssertTrue(terminal.contains("rows/s") && terminal.contains("s left"), terminal)
        XCTAssertTrue(terminal.contains("import interrupted"), terminal)
        guard let range = terminal.range(of: #""rows_committed":\d+"#, options: .regularExpression) else {
            return XCTFail(terminal)
        }
        let committed = Int(terminal[range].dropFirst(17))!
        XCTAssertTrue([10_000, 20_000, 30_000].contains(committed), "whole batches: \(committed)")
        let connection = try PGConnection(connectionString: url)
        func count() throws -> Int {
            try connection.query("SELECT count(*)::int8 AS n FROM quotes")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(try count(), committed, "the committed batches, and nothing of the one after")

        let second = try ServerProcess(["import", file.path], environment: ["DATABASE_URL": url])
        let secondStatus = try await second.waitForExit(timeout: .seconds(300))
        XCTAssertEqual(secondStatus, 0, second.output)
        XCTAssertTrue(second.output.contains("resumed an interrupted import"), second.output)
        XCTAssertTrue(second.output.contains("\"rows_already_committed\":\(committed)"), second.output)
        XCTAssertTrue(second.output.contains("\"line\":101"), "the rejected row, reported: \(second.output)")
        XCTAssertTrue(second.output.contains("\"inserted\":\(30_000 - committed)"), second.output)
        XCTAssertEqual(try count(), 30_000)
    }
}
