import Foundation
import PGClient
import QuoteVault
import Synchronization
import TestSupport
import XCTest

/// An import that sets the GIN indexes of quotes aside and builds them at its end (migration 0049): the same
/// indexes come back, searches answer exactly what they answer over rows inserted the ordinary way, and an
/// interrupted import leaves its committed rows with every index built.
final class ImportDeferredIndexesTests: XCTestCase {
    private static let words = [
        "the", "love", "river", "light", "été", "naïve", "zephyr", "lantern", "velmir", "velvet", "torquarin", "a",
    ]
    private static let firsts = ["Ada", "Lao", "Grace", "Nada", "Émile"]
    private static let lasts = ["Lovelace", "Tzu", "Hopper", "Smith", "Lovelaceson"]

    /// `count` quotes drawn from a seeded generator: common and rare words, words inside longer ones, accents.
    private static func records(count: Int) -> [QuoteRecord] {
        var random = SplitMix64(seed: 31)
        return (1...count).map { line in
            let length = Int.random(in: 3...9, using: &random)
            let text = (0..<length).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
            let author = "\(firsts.randomElement(using: &random)!) \(lasts.randomElement(using: &random)!)"
            let category = QuoteCategory.allCases.randomElement(using: &random)!.rawValue
            return QuoteRecord(line: line, text: "\(text) \(line)", author: author, category: category)
        }
    }

    /// Searches whose answers two databases of the same quotes must share.
    private static let searches = [
        "q=love", "q=river&page=2&page_size=7", "q=vel", "q=velmir", "q=torquarin&category=wisdom",
        "q=%C3%A9t%C3%A9", "q=NA%C3%AFVE", "q=the%20river", "q=zephyr%20lantern", "q=xylophone", "q=12",
        "q=ada&type=author",
        "q=ada%20lovelace&type=author", "q=lovelace&type=author&page=3", "q=%C3%A9mile&type=author",
        "q=nobody%20here&type=author",
    ]

    /// The GIN indexes of quotes: name and definition.
    fileprivate static func ginIndexes(_ connection: PGConnection) throws -> [String] {
        try connection.query(
            """
            SELECT c.relname::text || ': ' || pg_get_indexdef(c.oid) AS index
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
            WHERE i.indrelid = 'quotes'::regclass AND a.amname = 'gin' ORDER BY c.relname
            """
        ).map { try $0.decode("index", as: String.self) }
    }

    /// What a search (or the categories) answers, ids aside (the two databases number their quotes differently).
    private func answer(_ app: TestApp, _ path: String) throws -> String {
        let response = try app.client.get(path)
        XCTAssertEqual(response.status, 200, path)
        let body = try response.jsonObject()
        let rows = try response.items().map { item in
            item.filter { $0.key != "id" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                .joined(separator: "|")
        }
        return "\(body["total"] ?? "-") \(body["total_is_exact"] ?? "-") \(rows)"
    }

    func testSearchesAfterAnImportWithIndexesAsideEqualThoseAfterOrdinaryInserts() async throws {
        let imported = try await TestApp.start()
        let before = try await imported.withConnection { try Self.ginIndexes($0) }
        XCTAssertGreaterThanOrEqual(before.count, 8, "trigram, full-text and word indexes: \(before)")
        let pool = imported.pool
        let duringBatches = Mutex<[Int]>([])
        let report = try await QuoteImporter(pool: pool, batchSize: 100, deferral: .always).importRecords(
            Self.records(count: 700)
        ) { progress in
            guard progress.indexesToBuild == 0 else { return }
            let count = try pool.withConnectionSync { try Self.ginIndexes($0).count }
            duringBatches.withLock { $0.append(count) }
        }
        XCTAssertEqual(report.inserted, 700)
        XCTAssertEqual(report.indexesBuilt, before.count)
        XCTAssertEqual(duringBatches.withLock { $0 }, Array(repeating: 0, count: 7), "set aside while rows go in")
        let after = try await imported.withConnection { try Self.ginIndexes($0) }
        XCTAssertEqual(after, before, "the same indexes, built again")

        // The same rows, with the same times, inserted by one ordinary statement into another database.
        let rows = try await imported.withConnection { connection in
            try connection.query("SELECT text, author, category, created_at::text AS at FROM quotes").map {
                [
                    try $0.decode("text", as: String.self), try $0.decode("author", as: String.self),
                    try $0.decode("category", as: String.self), try $0.decode("at", as: String.self),
                ]
            }
        }
        let inserted = try await TestApp.start()
        try await inserted.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT t, a, c, at::timestamptz
                FROM unnest(\(rows.map { $0[0] })::text[], \(rows.map { $0[1] })::text[],
                            \(rows.map { $0[2] })::text[], \(rows.map { $0[3] })::text[]) AS r (t, a, c, at)
                """)
        }
        for search in Self.searches {
            let path = "/v1/quotes/search?\(search)"
            XCTAssertEqual(try answer(imported, path), try answer(inserted, path), path)
        }
        XCTAssertEqual(try answer(imported, "/v1/categories"), try answer(inserted, "/v1/categories"))
        let vocabulary =
            "SELECT string_agg(field::text || word || uses, ',' ORDER BY word, field) AS v FROM quote_vocabulary"
        let importedWords = try await imported.withConnection { try $0.query(PGQuery(unsafeSQL: vocabulary)) }
        let insertedWords = try await inserted.withConnection { try $0.query(PGQuery(unsafeSQL: vocabulary)) }
        XCTAssertEqual(
            try importedWords[0].decode("v", as: String.self), try insertedWords[0].decode("v", as: String.self))
        await imported.stop()
        await inserted.stop()
    }

    /// `auto` sets the indexes aside for an import of at least its threshold of rows into an empty table: one row
    /// fewer, or a table that holds quotes, keeps them row by row.
    func testAutoSetsIndexesAsideFromItsThresholdIntoAnEmptyTableOnly() async throws {
        let records = Self.records(count: 201)
        let below = try await TestApp.start()
        let belowReport = try await QuoteImporter(pool: below.pool, batchSize: 50, deferFrom: 100)
            .importRecords(Array(records[0..<99]))
        XCTAssertEqual(belowReport.indexesBuilt, 0, "99 rows, one under the threshold")
        let intoFilled = try await QuoteImporter(pool: below.pool, batchSize: 50, deferFrom: 100)
            .importRecords(Array(records[99..<199]))
        XCTAssertEqual(intoFilled.indexesBuilt, 0, "100 rows, but the table holds quotes")
        await below.stop()

        let atEdge = try await TestApp.start()
        let indexes = try await atEdge.withConnection { try Self.ginIndexes($0) }
        let edgeReport = try await QuoteImporter(pool: atEdge.pool, batchSize: 50, deferFrom: 100)
            .importRecords(Array(records[0..<100]))
        XCTAssertEqual(edgeReport.indexesBuilt, indexes.count, "100 rows into an empty table")
        let after = try await atEdge.withConnection { try Self.ginIndexes($0) }
        XCTAssertEqual(after, indexes)
        await atEdge.stop()
    }

    /// An import stopped after a committed batch builds the indexes it set aside before it ends; one killed while
    /// they are aside leaves them to the next import, which builds them at its end.
    func testAnInterruptedImportBuildsItsIndexesAndAKilledOneLeavesThemToTheNext() async throws {
        let app = try await TestApp.start()
        let before = try await app.withConnection { try Self.ginIndexes($0) }
        struct Stop: Error {}
        let importer = QuoteImporter(pool: app.pool, batchSize: 100, deferral: .always)
        do {
            _ = try await importer.importRecords(Self.records(count: 300)) { progress in
                if progress.done == 200 { throw Stop() }
            }
            XCTFail("the import should have stopped")
        } catch is Stop {}
        let afterStop = try await app.withConnection { try Self.ginIndexes($0) }
        XCTAssertEqual(afterStop, before, "built again before the import gave up")
        let count = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM quotes")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(count, 200, "the committed batches stay")

        // Killed while they were aside: as the import's first transaction leaves them.
        try await app.withConnection { _ = try $0.query("SELECT quote_import_defer_indexes()") }
        let aside = try await app.withConnection { try Self.ginIndexes($0) }
        XCTAssertEqual(aside, [])
        let next = try await QuoteImporter(pool: app.pool, deferral: .never).importRecords(Self.records(count: 300))
        XCTAssertEqual(next.inserted, 100)
        XCTAssertEqual(next.indexesBuilt, before.count)
        let afterNext = try await app.withConnection { try Self.ginIndexes($0) }
        XCTAssertEqual(afterNext, before)
        await app.stop()
    }
}

extension ImportDeferredIndexesTests {
    func testTheImportCommandSaysItBuiltTheIndexesItSetAside() async throws {
        let url = try TestDatabase.makeDatabase()
        let lines = (1...250).map { #"{"text": "Set aside \#($0)", "author": "Author", "category": "love"}"# }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let process = try ServerProcess(
            ["import", "--defer-indexes", "always", file.path], environment: ["DATABASE_URL": url])
        let status = try await process.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(status, 0, process.output)
        XCTAssertTrue(process.output.contains("search indexes set aside during the import built again"), process.output)
        XCTAssertTrue(process.output.contains("\"inserted\":250"), process.output)
        let connection = try PGConnection(connectionString: url)
        let aside = try connection.query("SELECT count(*)::int8 AS n FROM quote_import_deferred_indexes")
        XCTAssertEqual(try aside[0].decode("n", as: Int.self), 0)
        XCTAssertGreaterThanOrEqual(try Self.ginIndexes(connection).count, 8)
    }
}
