import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// An import that sets the upkeep aside (migration 0057) sends its batches on several connections side by side: it
/// must leave exactly what one connection with every trigger leaves (the same rows and times, the same duplicate
/// kept, the same vocabulary, counts, window of newest words and answers), and one killed between batches leaves
/// whole batches that the next run completes, without loss or duplicates.
final class ImportSideBySideTests: XCTestCase {
    /// Rows over several batches, with rows the unique index holds equal (case aside) to an earlier one, in the
    /// same batch and in the next ones, in another category: the earlier is kept.
    private static func records() -> [QuoteRecord] {
        let words = ["the", "love", "river", "été", "naïve", "zephyr", "lantern", "velmir", "torquarin"]
        let categories = QuoteCategory.allCases.map(\.rawValue)
        var records = (0..<600).map { n in
            QuoteRecord(
                line: n + 1, text: "\(words[n % 9]) \(words[n * 7 % 9]) \(words[n * 5 % 9]) \(n)",
                author: ["Ada Lovelace", "Lao Tzu", "Émile Zola"][n % 3], category: categories[n % 5])
        }
        for (copy, of) in [(130, 10), (180, 170), (205, 190), (260, 150), (420, 401), (590, 360)] {
            let original = records[of]
            records[copy] = QuoteRecord(
                line: copy + 1, text: original.text!.uppercased(), author: original.author!.lowercased(),
                category: categories[(of + 2) % 5])
        }
        return records
    }

    /// Everything an import leaves, times as offsets from the newest quote (the two imports start apart).
    private static func state(_ connection: PGConnection) throws -> [String] {
        let queries = [
            """
            SELECT string_agg(text || '|' || author || '|' || category || '|'
                || (created_at - (SELECT max(created_at) FROM quotes))::text, E'\\n' ORDER BY created_at DESC) AS v
            FROM quotes
            """,
            "SELECT string_agg(field::text || word || uses, ',' ORDER BY word, field) AS v FROM quote_vocabulary",
            "SELECT string_agg(category || count, ',' ORDER BY category) AS v FROM quote_counts",
            """
            SELECT string_agg(n.field::text || n.word || (n.created_at - m.newest)::text || n.category, ','
                ORDER BY n.field, n.word, n.created_at) AS v
            FROM quote_words_newest n, (SELECT max(created_at) AS newest FROM quotes) m
            """,
            """
            SELECT (SELECT CASE WHEN isfinite(since) THEN (since - (SELECT max(created_at) FROM quotes))::text
                        ELSE since::text END FROM quote_words_window)
                || (SELECT count(*) FROM quote_import_words) || (SELECT count(*) FROM quote_import_deferred_upkeep)
                AS v
            """,
        ]
        return try queries.map { try connection.query(PGQuery(unsafeSQL: $0))[0].decode("v", as: String.self) }
    }

    /// What a search answers, ids and times aside (the two imports start apart; the rows' times are compared as
    /// offsets above).
    private func answer(_ app: TestApp, _ path: String) throws -> String {
        let response = try app.client.get(path)
        XCTAssertEqual(response.status, 200, path)
        let rows = try response.items().map { item in
            item.filter { $0.key != "id" && $0.key != "created_at" }.sorted { $0.key < $1.key }.map {
                "\($0.key)=\($0.value)"
            }
            .joined(separator: "|")
        }
        return "\(try response.jsonObject()["total"] ?? "-") \(rows)"
    }

    func testBatchesSideBySideLeaveWhatOneConnectionWithEveryTriggerLeaves() async throws {
        let sideBySide = try await TestApp.start()
        XCTAssertGreaterThan(sideBySide.pool.stats.size, 1, "several connections to send batches on")
        let bulk = try await QuoteImporter(pool: sideBySide.pool, batchSize: 40, deferral: .always)
            .importRecords(Self.records())
        let oneByOne = try await TestApp.start()
        let ordinary = try await QuoteImporter(pool: oneByOne.pool, batchSize: 40, deferral: .never)
            .importRecords(Self.records())
        XCTAssertEqual(bulk.inserted, 594)
        XCTAssertEqual(bulk.duplicates, 6)
        XCTAssertEqual(ordinary.inserted, bulk.inserted)
        XCTAssertEqual(ordinary.duplicates, bulk.duplicates)
        let bulkState = try await sideBySide.withConnection { try Self.state($0) }
        let ordinaryState = try await oneByOne.withConnection { try Self.state($0) }
        for (name, (left, right)) in zip(
            ["rows", "vocabulary", "counts", "newest words", "window, words and marks left"],
            zip(bulkState, ordinaryState))
        {
            XCTAssertEqual(left, right, name)
        }
        let kept = Self.records()[170]
        XCTAssertTrue(bulkState[0].contains("\n\(kept.text!)|\(kept.author!)|\(kept.category!)|"), "the earlier kept")
        let searches = ["q=love", "q=velmir&page=2&page_size=9", "q=TORQUARIN", "q=lovelace&type=author", "q=10"]
        for search in searches + ["q=%C3%A9t%C3%A9%20river", "q=zola&type=author&category=love"] {
            let path = "/v1/quotes/search?\(search)"
            XCTAssertEqual(try answer(sideBySide, path), try answer(oneByOne, path), path)
        }
        XCTAssertEqual(try answer(sideBySide, "/v1/categories"), try answer(oneByOne, "/v1/categories"))
        await sideBySide.stop()
        await oneByOne.stop()
    }

    /// `kill -9` while batches go in side by side: the rows committed are whole batches (the resume point), the
    /// words counted aside and the indexes set aside wait; the next run resumes there and leaves every row once,
    /// the vocabulary equal to a count from scratch, the window filled and every index built.
    func testAnImportKilledBetweenBatchesResumesWithoutLossOrDuplicates() async throws {
        let url = try TestDatabase.makeDatabase()
        let lines = (1...60_000).map {
            #"{"text": "Killed import \#($0) word\#($0 % 97)", "author": "Author \#($0 % 50)", "category": "love"}"#
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let first = try ServerProcess(
            ["import", "--defer-indexes", "always", file.path], environment: ["DATABASE_URL": url], terminal: true)
        let deadline = ContinuousClock.now + .seconds(300)
        while !first.terminalOutput().contains("0000 / 60000 rows"), try first.poll() == nil,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        first.signal(SIGKILL)
        let firstStatus = try await first.waitForExit(timeout: .seconds(60))
        XCTAssertNotEqual(firstStatus, 0, "killed before its end: \(first.terminalOutput())")
        let connection = try PGConnection(connectionString: url)
        func number(_ sql: String) throws -> Int {
            try connection.query(PGQuery(unsafeSQL: sql))[0].decode("n", as: Int.self)
        }
        let committed = try number("SELECT count(*)::int8 AS n FROM quotes")
        XCTAssertEqual(committed % 10_000, 0, "whole batches: \(committed)")
        XCTAssertGreaterThan(committed, 0)
        XCTAssertLessThan(committed, 60_000)
        XCTAssertEqual(try number("SELECT done::int8 AS n FROM quote_imports"), committed, "the resume point")
        XCTAssertEqual(try number("SELECT count(*)::int8 AS n FROM quote_import_deferred_upkeep"), 1)
        XCTAssertGreaterThan(try number("SELECT count(*)::int8 AS n FROM quote_import_words"), 0)

        let second = try ServerProcess(["import", file.path], environment: ["DATABASE_URL": url])
        let secondStatus = try await second.waitForExit(timeout: .seconds(300))
        XCTAssertEqual(secondStatus, 0, second.output)
        XCTAssertTrue(second.output.contains("\"rows_already_committed\":\(committed)"), second.output)
        XCTAssertTrue(second.output.contains("\"inserted\":\(60_000 - committed)"), second.output)
        XCTAssertEqual(try number("SELECT count(DISTINCT text)::int8 AS n FROM quotes"), 60_000)
        XCTAssertEqual(try number("SELECT count(*)::int8 AS n FROM quotes"), 60_000, "every row once")
        let recount = """
            SELECT count(*)::int8 AS n FROM (
                SELECT field, word, uses FROM quote_vocabulary
                EXCEPT ALL (
                    SELECT 't'::"char", w, count(*) FROM quotes, quote_words_of(text) AS w GROUP BY w
                    UNION ALL SELECT 'a', w, count(*) FROM quotes, quote_words_of(author) AS w GROUP BY w)) AS d
            """
        XCTAssertEqual(try number(recount), 0, "the vocabulary counts every word of every quote")
        XCTAssertEqual(try number("SELECT count(*)::int8 AS n FROM quote_vocabulary"), 2 + 60_000 + 97 + 1 + 50)
        let outsideWindow = """
            SELECT count(*)::int8 AS n FROM quotes q, quote_words_window w
            WHERE q.created_at >= w.since AND NOT EXISTS (SELECT 1 FROM quote_words_newest n WHERE n.quote_id = q.id)
            """
        XCTAssertEqual(try number(outsideWindow), 0, "the newest quotes have their words in order")
        XCTAssertEqual(try number("SELECT count(*)::int8 AS n FROM quote_import_deferred_upkeep"), 0)
        XCTAssertEqual(try number("SELECT count(*)::int8 AS n FROM quote_import_words"), 0)
        XCTAssertEqual(try number("SELECT pg_relation_size('quote_import_words') AS n"), 0, "its pages given back")
        XCTAssertEqual(try number("SELECT count(*)::int8 AS n FROM quote_import_deferred_indexes"), 0)
        XCTAssertEqual(try number("SELECT count(*)::int8 AS n FROM quote_imports"), 0)
    }
}
