import Foundation
import PGClient
import TestSupport
import XCTest

/// Migration 0063: two imports with the upkeep set aside (0057) at the same time, the first ending while the
/// other still inserts batches: the other's later quotes reach the window of newest words at its own end, and a
/// one-word search finds them.
final class ImportUpkeepOverlapTests: XCTestCase {
    /// One batch as an import with the upkeep set aside sends it: the triggers' work left out, the words counted.
    private func bulkBatch(_ app: TestApp, text: String, at time: String) async throws {
        try await app.pool.withTransaction { connection in
            try connection.execute(unsafeSQL: "SET LOCAL quote_import.bulk = on")
            try connection.query(
                "SELECT quote_import_count_words(ARRAY[\(text)], ARRAY['Someone'], 1)")
            try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                VALUES (\(text), 'Someone', 'wisdom', \(time)::timestamptz)
                """)
        }
    }

    private func finishUpkeep(_ app: TestApp) async throws {
        try await app.pool.withTransaction { connection in
            _ = try connection.query("SELECT quote_import_finish_upkeep()")
        }
    }

    func testTheImportThatEndsLastPutsItsLaterQuotesInTheWindow() async throws {
        let app = try await TestApp.start()
        try await app.withConnection { connection in
            _ = try connection.query("INSERT INTO quote_import_deferred_upkeep (import_key) VALUES ('a'), ('b')")
        }
        try await bulkBatch(app, text: "the first lanternfish", at: "2024-01-01")
        try await finishUpkeep(app)  // import "a" ends: every marker is gone
        try await bulkBatch(app, text: "the second lanternfish", at: "2024-02-01")  // import "b" goes on
        try await finishUpkeep(app)  // import "b" ends
        let window = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT count(*) AS n FROM quote_words_newest WHERE field = 't' AND word = 'lanternfish'
                  AND created_at >= (SELECT since FROM quote_words_window)
                """
            )[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(window, 2)
        let response = try app.client.get("/v1/quotes/search?q=lanternfish&type=keyword")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, 2)
        XCTAssertEqual(
            try response.items().map { $0["text"] as! String }, ["the second lanternfish", "the first lanternfish"])
        let left = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT (SELECT count(*) FROM quote_import_words) + (SELECT count(*) FROM quote_import_deferred_upkeep)
                    AS n
                """
            )[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(left, 0, "nothing left aside")
        await app.stop()
    }
}
