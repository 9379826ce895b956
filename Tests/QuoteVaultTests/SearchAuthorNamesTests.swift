import Foundation
import PGClient
import TestSupport
import XCTest

/// Migration 0060: several words over authors with many candidates are counted and paged through the names of
/// authors (`quote_authors`, `quotes_by_author_idx`): the same ranking and exact total, the count from the index
/// alone, the page newest first reading only its rows.
final class SearchAuthorNamesTests: XCTestCase {
    private func authors(_ response: HTTPTestResponse) throws -> [String] {
        try response.items().map { $0["author"] as! String }
    }

    /// `count` quotes by `author`, one a minute from `start`, each text distinct.
    private func insert(_ app: TestApp, count: Int, author: String, start: String) async throws {
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT \(author) || ' words ' || i, \(author), 'wisdom', \(start)::timestamptz + i * interval '1 minute'
                FROM generate_series(1, \(count)) AS i
                """)
        }
    }

    /// 600 quotes by "Ada Lovelace" (the query as whole words), 30 by "Ada Lovelaces" (start of a word), 20 by
    /// "Nevada Lovelace" (inside a word), beside 400 by another author: about 400 candidates by the words' counts.
    private func start() async throws -> TestApp {
        let app = try await TestApp.start()
        try await insert(app, count: 600, author: "Ada Lovelace", start: "2020-01-01")
        try await insert(app, count: 30, author: "Ada Lovelaces", start: "2021-01-01")
        try await insert(app, count: 20, author: "Nevada Lovelace", start: "2022-01-01")
        try await insert(app, count: 400, author: "Someone Else", start: "2019-01-01")
        // The visibility map set (a snapshot held elsewhere may delay it): the count can skip the table.
        for _ in 1...10 {
            let allVisible = try await app.withConnection { connection in
                _ = try connection.query("VACUUM ANALYZE quotes")
                return try connection.query(
                    "SELECT relallvisible >= relpages AS all FROM pg_class WHERE oid = 'quotes'::regclass"
                )[0].decode("all", as: Bool.self)
            }
            if allVisible { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        return app
    }

    func testPagesRankByTierThenNewestWithTheExactTotal() async throws {
        let app = try await start()
        let first = try app.search("Ada LOVELACE", type: "author", extra: "&page_size=20")
        XCTAssertEqual(try first.jsonObject()["total"] as? Int, 650)
        XCTAssertEqual(try first.jsonObject()["total_is_exact"] as? Bool, true)
        XCTAssertEqual(
            try first.items().map { $0["text"] as! String },
            (581...600).reversed().map {
                "Ada Lovelace words \($0)"
            })
        // Rows 626-650: the last 5 of the start of a word, then the 20 inside a word, each newest first.
        let crossing = try app.search("ada lovelace", type: "author", extra: "&page_size=25&page=26")
        XCTAssertEqual(
            try crossing.items().map { $0["text"] as! String },
            (1...5).reversed().map { "Ada Lovelaces words \($0)" }
                + (1...20).reversed().map { "Nevada Lovelace words \($0)" })
        XCTAssertEqual(try crossing.jsonObject()["has_more"] as? Bool, false)
        let past = try app.search("ada lovelace", type: "author", extra: "&page_size=25&page=27")
        XCTAssertEqual(try past.items().count, 0)
        XCTAssertEqual(try past.jsonObject()["total"] as? Int, 650)
        // Every page equals the ranking of all matches read in full (0007's function), row for row.
        let ranked = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT id::text AS id FROM search.quote_search_ranked_author('%ada lovelace%', '\\mada lovelace\\M', '\\mada lovelace',
                                                          NULL, 1000, 0)
                """
            ).map { try $0.decode("id", as: String.self) }
        }
        var paged: [String] = []
        for page in 1...7 {
            paged += try app.search("ada lovelace", type: "author", extra: "&page_size=100&page=\(page)").items()
                .map { ($0["id"] as! String).lowercased() }
        }
        XCTAssertEqual(paged, ranked)
        await app.stop()
    }

    func testCategoryAndLaterWritesAreCounted() async throws {
        let app = try await start()
        XCTAssertEqual(
            try app.search("ada lovelace", type: "author", extra: "&category=wisdom").jsonObject()["total"] as? Int, 650
        )
        XCTAssertEqual(
            try app.search("ada lovelace", type: "author", extra: "&category=humor").jsonObject()["total"] as? Int, 0)
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                UPDATE quotes SET author = 'Ada Lovelace Jr', category = 'humor', created_at = '2030-01-01'
                WHERE text = 'Someone Else words 1'
                """)
            _ = try connection.query(
                "INSERT INTO quotes (text, author, category) VALUES ('new words', 'Lady Ada Lovelace', 'humor')")
        }
        let humor = try app.search("ada lovelace", type: "author", extra: "&category=humor")
        XCTAssertEqual(try humor.jsonObject()["total"] as? Int, 2)
        XCTAssertEqual(try authors(humor), ["Ada Lovelace Jr", "Lady Ada Lovelace"], "newest first within the tier")
        XCTAssertEqual(try app.search("ada lovelace", type: "author").jsonObject()["total"] as? Int, 652)
        // A name whose last quote went matches nothing.
        try await app.withConnection { connection in
            _ = try connection.query("DELETE FROM quotes WHERE author = 'Nevada Lovelace'")
        }
        XCTAssertEqual(try app.search("ada lovelace", type: "author").jsonObject()["total"] as? Int, 632)
        await app.stop()
    }

    func testTheCountReadsTheIndexAloneAndThePageOnlyItsRows() async throws {
        let app = try await start()
        let plans = try app.scansInPlans(
            of: """
                SELECT * FROM search.quote_search_words_author('ada lovelace', '%ada lovelace%', '\\mada lovelace\\M',
                                                        '\\mada lovelace', NULL, 21, 0)
                """)
        let lines = plans.split(separator: "\n")
        // The total: the 650 entries of the three names, from the index alone.
        let count = try XCTUnwrap(lines.first { $0.contains("Index Only Scan using quotes_by_author_idx") }, plans)
        XCTAssertTrue(count.contains("actual rows=650 "), plans)
        // The page: the newest 21 (and one more, to close the sort's group) of "Ada Lovelace", not its 600.
        let page = try XCTUnwrap(
            lines.first { $0.contains("Index Scan using quotes_by_author_idx") && !$0.contains("never executed") },
            plans)
        let actual = try XCTUnwrap(page.range(of: "actual rows="), String(page))
        let rows = try XCTUnwrap(Int(page[actual.upperBound...].prefix { $0.isNumber }), String(page))
        XCTAssertLessThanOrEqual(rows, 25, plans)
        // No match is read through the words or the trigrams of the quotes.
        XCTAssertFalse(plans.contains("quotes_author_words_idx"), plans)
        XCTAssertFalse(plans.contains("quotes_author_trgm_idx"), plans)
        XCTAssertFalse(
            lines.contains { $0.contains("Heap Scan on quotes ") && !$0.contains("never executed") }, plans)
        await app.stop()
    }

    func testANameAddedTwiceCountsItsQuotesOnce() async throws {
        let app = try await start()
        try await insert(app, count: 240, author: "Zed Zebra", start: "2023-01-01")
        // Two writers adding one new author at once may both add the name (no unique key: neither waits).
        try await app.withConnection { connection in
            _ = try connection.query("INSERT INTO quote_authors (author) VALUES ('Zed Zebra')")
            _ = try connection.query("VACUUM ANALYZE quotes")
        }
        let response = try app.search("zed zebra", type: "author", extra: "&page_size=100&page=3")
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, 240, "each quote once")
        XCTAssertEqual(
            try response.items().map { $0["text"] as! String }, (1...40).reversed().map { "Zed Zebra words \($0)" })
        await app.stop()
    }
}
