import Foundation
import PGClient
import TestSupport
import XCTest

/// Migration 0064: a candidate is tested with LIKE (the query as typed, a byte comparison) before ILIKE, which
/// lowercases the whole text. What matches stays ILIKE's: every case of the query, Unicode letters too. The full
/// rankings (`quote_search_ranked_text`/`_author`) take their tiers from `quote_search_tier`: the same order.
final class SearchExactCaseFirstTests: XCTestCase {
    /// One quote a day from 2024-01-01, in this order (the last is the newest).
    private static let texts = [
        "a quiet fjord, as typed", "A Quiet Fjord, capitalised", "A QUIET FJORD, SHOUTED", "a qUiEt FjOrD, mixed",
        "a quiet, still fjord: both words apart", "quietfjord: one word",
        "une éphémère øresund", "UNE ÉPHÉMÈRE ØRESUND", "Une Éphémère Øresund", "une ephemere oresund: no accents",
    ]

    private func start() async throws -> TestApp {
        let app = try await TestApp.start()
        try await app.withConnection { connection in
            for (day, text) in Self.texts.enumerated() {
                _ = try connection.query(
                    """
                    INSERT INTO quotes (text, author, category, created_at)
                    VALUES (\(text), 'Someone ' || \(day), 'wisdom', '2024-01-01'::timestamptz + \(day) * interval '1 day')
                    """)
            }
            _ = try connection.query("ANALYZE quotes")
        }
        return app
    }

    private func found(_ app: TestApp, _ query: String) throws -> [String] {
        let response = try app.search(query, extra: "&page_size=100")
        XCTAssertEqual(response.status, 200)
        let items = try response.items().map { $0["text"] as! String }
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, items.count, query)
        return items
    }

    func testEveryCaseOfTheQueryMatchesWhateverCaseItIsTypedIn() async throws {
        let app = try await start()
        let quietFjord = [
            "a qUiEt FjOrD, mixed", "A QUIET FJORD, SHOUTED", "A Quiet Fjord, capitalised", "a quiet fjord, as typed",
        ]
        for query in ["quiet fjord", "Quiet Fjord", "QUIET FJORD"] {
            XCTAssertEqual(try found(app, query), quietFjord, query)
        }
        let unicode = ["Une Éphémère Øresund", "UNE ÉPHÉMÈRE ØRESUND", "une éphémère øresund"]
        for query in ["éphémère øresund", "ÉPHÉMÈRE ØRESUND"] {
            XCTAssertEqual(try found(app, query), unicode, query)
        }
        await app.stop()
    }

    func testTheRealFunctionTestsLikeBeforeILike() async throws {
        let app = try await start()
        let call = """
            SELECT * FROM search.quote_search_words_text('quiet fjord', '%quiet fjord%', '\\mquiet fjord\\M', '\\mquiet fjord',
                                                  NULL, 21, 0)
            """
        // The candidates' filter (auto_explain of the real function): LIKE, then ILIKE where LIKE fails.
        let filters = try app.planLines(of: call) { $0.contains("Filter:") && $0.contains("~~*") }
        XCTAssertTrue(filters.contains("((text ~~ $3) OR (text ~~* $3))"), filters)
        XCTAssertFalse(filters.contains("COALESCE((text ~~* $3), false)"), filters)
        await app.stop()
    }

    func testTheFullRankingTestsLikeBeforeILikeAndRanksAsTheWordsDo() async throws {
        let app = try await start()
        try await app.insertQuotes(["quiet fjords, a word's start", "disquiet fjord, inside a word"])
        let patterns = "'%quiet fjord%', '\\mquiet fjord\\M', '\\mquiet fjord'"
        // quote_search_ranked_text, the count of several words with too many candidates for the words' lists
        let ranked = "SELECT * FROM search.quote_search_ranked_text(\(patterns), NULL, 21, 0)"
        let words = "SELECT * FROM search.quote_search_words_text('quiet fjord', \(patterns), NULL, 21, 0)"
        let rows = try await app.withConnection { connection in
            try [ranked, words].map { call in
                try connection.query(PGQuery(unsafeSQL: call)).map { try $0.decode("text", as: String.self) }
            }
        }
        XCTAssertEqual(
            rows[0],
            [
                "a qUiEt FjOrD, mixed", "A QUIET FJORD, SHOUTED", "A Quiet Fjord, capitalised",
                "a quiet fjord, as typed",
                "quiet fjords, a word's start", "disquiet fjord, inside a word",
            ])
        XCTAssertEqual(rows[0], rows[1])
        let filters = try app.planLines(of: ranked) { $0.contains("Filter:") && $0.contains("~~*") }
        XCTAssertTrue(filters.contains("((text ~~ $1) OR (text ~~* $1))"), filters)
        await app.stop()
    }

    func testTheFullRankingOfAuthorsRanksAsTheWordsDo() async throws {
        let app = try await TestApp.start()
        // oldest first: a whole word, the start of a word, inside a word
        for author in ["Ann Lee", "Annabel Lee", "Joann Smith"] {
            try await app.insertQuotes(["A saying by \(author)"], author: author)
        }
        let patterns = "'%ann%', '\\mann\\M', '\\mann'"
        let calls = [
            "SELECT * FROM search.quote_search_ranked_author(\(patterns), NULL, 21, 0)",
            "SELECT * FROM search.quote_search_words_author('ann', \(patterns), NULL, 21, 0)",
        ]
        let rows = try await app.withConnection { connection in
            try calls.map { call in
                try connection.query(PGQuery(unsafeSQL: call)).map { try $0.decode("author", as: String.self) }
            }
        }
        XCTAssertEqual(rows[0], ["Ann Lee", "Annabel Lee", "Joann Smith"])
        XCTAssertEqual(rows[0], rows[1])
        await app.stop()
    }
}
