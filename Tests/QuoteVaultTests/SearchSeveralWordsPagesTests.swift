import Foundation
import PGClient
import TestSupport
import XCTest

/// Migration 0061: a query of several words with few matches counts every match but ranks only the newest ones its
/// page needs (a match's tier costs two regular expressions); every page is still the full ranking's.
final class SearchSeveralWordsPagesTests: XCTestCase {
    /// `count` quotes of `text` and a number, one a minute from `start`.
    private func insert(_ app: TestApp, count: Int, text: String, category: String = "wisdom", start: String)
        async throws
    {
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT \(text) || ' ' || i, 'Someone', \(category), \(start)::timestamptz + i * interval '1 minute'
                FROM generate_series(1, \(count)) AS i
                """)
        }
    }

    /// Newest first: 25 matches of "quiet fjord" as whole words (2023), 10 inside a word (2022), 10 at the start
    /// of a word (2021), 30 more as whole words (2020); beside 300 quotes holding both words apart.
    private func start() async throws -> TestApp {
        let app = try await TestApp.start()
        try await insert(app, count: 25, text: "the quiet fjord", start: "2023-01-01")
        try await insert(app, count: 10, text: "disquiet fjord", category: "humor", start: "2022-01-01")
        try await insert(app, count: 10, text: "a quiet fjords", start: "2021-01-01")
        try await insert(app, count: 30, text: "a quiet fjord", category: "humor", start: "2020-01-01")
        try await insert(app, count: 300, text: "a fjord, never quiet", start: "2019-01-01")
        try await app.withConnection { connection in _ = try connection.query("ANALYZE quotes") }
        return app
    }

    /// The contract's order: whole words, then the start of a word, then anywhere; newest first within each.
    private let ranking: [String] =
        (1...25).reversed().map { "the quiet fjord \($0)" } + (1...30).reversed().map { "a quiet fjord \($0)" }
        + (1...10).reversed().map { "a quiet fjords \($0)" } + (1...10).reversed().map { "disquiet fjord \($0)" }

    func testEveryPageIsTheFullRankingsPage() async throws {
        let app = try await start()
        for size in [7, 20, 100] {
            var shown: [String] = []
            for page in 1...(ranking.count / size + 2) {
                let response = try app.search("Quiet Fjord", extra: "&page=\(page)&page_size=\(size)")
                XCTAssertEqual(response.status, 200)
                XCTAssertEqual(try response.jsonObject()["total"] as? Int, ranking.count)
                XCTAssertEqual(try response.jsonObject()["total_is_exact"] as? Bool, true)
                shown += try response.items().map { $0["text"] as! String }
            }
            XCTAssertEqual(shown, ranking, "pages of \(size)")
        }
        // With a category: its matches only, in the same order.
        let humor = try app.search("quiet fjord", extra: "&category=humor&page_size=100")
        XCTAssertEqual(try humor.jsonObject()["total"] as? Int, 40)
        XCTAssertEqual(
            try humor.items().map { $0["text"] as! String },
            ranking.filter { $0.hasPrefix("a quiet fjord ") || $0.hasPrefix("disquiet") })
        await app.stop()
    }

    func testOnlyTheNewestMatchesAreRankedForTheFirstPage() async throws {
        let app = try await start()
        // The first page of 20 (21 rows asked): the 21 newest matches are all whole words, so their tiers are the
        // only ones computed, and the page is theirs; the exact total still counts all 75.
        let call = """
            SELECT * FROM search.quote_search_words_text('quiet fjord', '%quiet fjord%', '\\mquiet fjord\\M', '\\mquiet fjord',
                                                  NULL, 21, 0)
            """
        let rows = try await app.withConnection { connection in
            try connection.query(PGQuery(unsafeSQL: call)).map { try $0.decode("text", as: String.self) }
        }
        XCTAssertEqual(rows, Array(ranking.prefix(21)))
        let plans = try app.scansInPlans(of: call)
        // (the tiers' statement scans `unnest e`, the page's `e`: both read the 21 newest matches only)
        let ranked = plans.split(separator: "\n").filter {
            $0.contains("Function Scan on unnest e ") || $0.contains("Function Scan on e ")
        }
        XCTAssertEqual(ranked.count, 2, plans)
        XCTAssertTrue(ranked.allSatisfy { $0.contains("actual rows=21 ") }, plans)
        XCTAssertTrue(plans.contains("quotes_text_pairs_idx"), plans)
        await app.stop()
    }
}
