import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// Writes into a table in use leave the GIN indexes that searches read with a short pending list, or none
/// (migration 0062): a search does not read what was written since the last merge. Searches answer the same once
/// the lists are merged.
final class GINPendingListTests: XCTestCase {
    private static let words = [
        "love", "river", "light", "ephemeral", "fjord", "torquarin", "velmir", "zenith", "été", "naïve", "the", "a",
    ]
    private static let authors = ["Ada Lovelace", "Lao Tzu", "Grace Hopper", "Émile Zola", "Ada Smith"]

    /// Quotes `lines` drawn from a seeded generator.
    private static func records(_ lines: ClosedRange<Int>) -> [QuoteRecord] {
        var random = SplitMix64(seed: 62)
        return lines.map { line in
            let length = Int.random(in: 4...12, using: &random)
            let text = (0..<length).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
            return QuoteRecord(
                line: line, text: "\(text) \(line)", author: authors.randomElement(using: &random)!,
                category: QuoteCategory.allCases.randomElement(using: &random)!.rawValue)
        }
    }

    private static let searches = [
        "q=love", "q=torquarin", "q=ephemeral%20fjord", "q=fjord%20love&page=2&page_size=5", "q=vel", "q=xylophone",
        "q=%C3%A9t%C3%A9", "q=ada&type=author", "q=ada%20lovelace&type=author", "q=nobody&type=author",
    ]

    /// Each GIN index that searches read (of quotes, of the vocabulary, of the authors' names): its table and its
    /// pending pages.
    private static func pendingPages(_ connection: PGConnection) throws -> [(index: String, table: String, pages: Int)]
    {
        try connection.query(
            """
            SELECT c.relname::text AS index, i.indrelid::regclass::text AS table,
                   (pgstatginindex(c.oid)).pending_pages::int8 AS pages
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
            WHERE i.indrelid IN ('quotes'::regclass, 'quote_vocabulary'::regclass, 'quote_authors'::regclass)
              AND a.amname = 'gin'
            ORDER BY c.relname
            """
        ).map {
            (
                try $0.decode("index", as: String.self), try $0.decode("table", as: String.self),
                try $0.decode("pages", as: Int.self)
            )
        }
    }

    private func answers(_ app: TestApp) throws -> [String] {
        try Self.searches.map { search in
            let response = try app.client.get("/v1/quotes/search?\(search)")
            XCTAssertEqual(response.status, 200, search)
            return String(decoding: response.body, as: UTF8.self)
        }
    }

    func testWritesIntoATableInUseLeaveShortPendingListsAndTheSameAnswers() async throws {
        let app = try await TestApp.start { $0.answerCacheBytes = 0 }  // every request reaches the search
        try await app.withConnection { try $0.execute(unsafeSQL: "CREATE EXTENSION IF NOT EXISTS pgstattuple") }
        // A table in use: quotes already there, then an import through the indexes in the console's batches of 500,
        // then quotes added one at a time as the console adds them.
        let importer = QuoteImporter(pool: app.pool, batchSize: 500, deferral: .never)
        let first = try await importer.importRecords(Self.records(1...500))
        let second = try await importer.importRecords(Self.records(501...3_500))
        XCTAssertEqual(first.inserted + second.inserted, 3_500)
        XCTAssertEqual(second.indexesBuilt, 0, "the indexes were kept row by row")
        let editor = QuoteEditor(pool: app.pool)
        for record in Self.records(3_501...3_600) {
            _ = try await editor.add(record, by: .commandLine)
        }

        let pending = try await app.withConnection { try Self.pendingPages($0) }
        XCTAssertGreaterThanOrEqual(pending.filter { $0.table == "quotes" }.count, 9, "\(pending)")
        XCTAssertEqual(pending.filter { $0.table != "quotes" }.count, 2, "\(pending)")
        for (index, table, pages) in pending {
            if table == "quotes" {
                // 64 kB is 8 pages; twice that if an autovacuum was merging the list meanwhile. PostgreSQL's
                // default (4 MB) leaves several times that here.
                XCTAssertLessThanOrEqual(pages, 16, index)
            } else {
                XCTAssertEqual(pages, 0, "\(index): no pending list")
            }
        }

        let before = try answers(app)
        XCTAssertTrue(before[0].contains("love"), before[0])
        try await app.withConnection { connection in
            for (index, _, _) in try Self.pendingPages(connection) {
                try connection.query("SELECT gin_clean_pending_list(\(index)::regclass)")
            }
            XCTAssertEqual(try Self.pendingPages(connection).map(\.pages).reduce(0, +), 0)
        }
        let after = try answers(app)
        for (search, (answerBefore, answerAfter)) in zip(Self.searches, zip(before, after)) {
            XCTAssertEqual(answerBefore, answerAfter, search)
        }
        await app.stop()
    }
}
