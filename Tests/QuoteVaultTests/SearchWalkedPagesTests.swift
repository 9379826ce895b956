import Foundation
import PGClient
import TestSupport
import XCTest

/// Migration 0055: the search function says whether its page was the walk's (`walked`), and the server remembers
/// the exact total of such a query per version of the quotes without telling a word by itself: asked again at
/// that version, the walk alone answers, with the first answer's page and total; a new version counts again.
/// Migration 0056: a walk whose rows all come from the window of ordered words runs no walk's statement.
final class SearchWalkedPagesTests: XCTestCase {
    /// 240 matches of `word` over three tiers, interleaved in time: whole word, start of a word, inside a word.
    private func insertMatches(_ app: TestApp, _ word: String) async throws {
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT (ARRAY[initcap(\(word)) || ' sings ', 'The ' || \(word) || 'bra river ',
                              'A ka' || \(word) || ' night '])[i % 3 + 1] || i,
                       'Author ' || i, 'wisdom', '2020-01-01'::timestamptz + i * interval '1 minute'
                FROM generate_series(1, 240) AS i
                """)
        }
    }

    /// `total` and `walked` of the real function for `query` over texts.
    private func words(_ app: TestApp, _ query: String) async throws -> (total: Int?, walked: Bool) {
        try await app.withConnection { connection in
            let row = try connection.query(
                """
                SELECT total, walked FROM search.quote_search_words_text(\(query), '%' || \(query) || '%',
                    '\\m' || \(query) || '\\M', '\\m' || \(query), NULL, 21, 0)
                """)[0]
            return (try row.decode("total", as: Int?.self), try row.decode("walked", as: Bool.self))
        }
    }

    /// Renames the search by the index of words away, so that only a request answered without it succeeds.
    private func hideTheWordSearch(_ app: TestApp, _ hidden: Bool) async throws {
        let names = ["quote_search_words_text", "hidden_words_text"]
        let (from, to) = hidden ? (names[0], names[1]) : (names[1], names[0])
        try await app.withConnection { connection in
            try connection.execute(
                unsafeSQL: "ALTER FUNCTION search.\(from)(text, text, text, text, text, bigint, bigint) RENAME TO \(to)"
            )
        }
    }

    func testTheSearchSaysWhenItsPageWasTheWalks() async throws {
        let app = try await TestApp.start()
        try await insertMatches(app, "velmir")
        try await app.insertQuotes(["Ostrand sings", "The ostrandbra river", "Plain words"])
        let walked = try await words(app, "velmir")
        XCTAssertEqual(walked.total, 240)
        XCTAssertTrue(walked.walked, "one word with many candidates: the walk's page")
        let few = try await words(app, "ostrand")
        XCTAssertEqual(few.total, 2)
        XCTAssertFalse(few.walked, "few candidates: read whole and sorted")
        let absent = try await words(app, "xylophone")
        XCTAssertEqual(absent.total, 0)
        XCTAssertFalse(absent.walked)
        let twoWords = try await words(app, "velmir sings")
        XCTAssertFalse(twoWords.walked, "several words: not the walk's page")
        await app.stop()
    }

    func testAWalkFromTheWindowAloneSetsUpNoWalkAndAnswersNewestFirst() async throws {
        let app = try await TestApp.start()
        let ids = try await app.insertQuotes((1...30).map { "Love number \($0)" } + ["Plain words"])
        let call = "SELECT * FROM search.quote_search_walk_text('%love%', '\\mlove\\M', '\\mlove', 'love', NULL, 21)"
        let fromWindow = try app.scansInPlans(of: call)
        XCTAssertTrue(fromWindow.contains("quote_words_newest"), fromWindow)
        XCTAssertFalse(fromWindow.contains("quotes_newest_author_idx"), "no walk set up: \(fromWindow)")
        let page = try await app.withConnection { connection in
            try connection.query(PGQuery(unsafeSQL: call)).map { try $0.decode("id", as: UUID.self) }
        }
        XCTAssertEqual(page, Array(ids[0..<30].reversed().prefix(21)), "newest first")
        // Inside longer words only ("ove"): that tier is walked newest first, through the statement with walks.
        let walked = try app.scansInPlans(
            of: "SELECT * FROM search.quote_search_walk_text('%ove%', '\\move\\M', '\\move', 'ove', NULL, 21)")
        XCTAssertTrue(walked.contains("quotes_newest_author_idx"), walked)
        await app.stop()
    }

    func testAWalkedWordOutsideASCIIIsAnsweredByTheWalkAloneAtTheSameVersion() async throws {
        let app = try await TestApp.start { $0.answerCacheBytes = 0 }  // every request reaches the search
        try await insertMatches(app, "vélmir")
        try await app.insertQuotes(["Ostrand sings"])
        let query = "v%C3%A9lmir"
        var first: [String] = []
        for page in 1...13 {
            first.append(try app.client.get("/v1/quotes/search?q=\(query)&page_size=20&page=\(page)").text)
        }
        let one = try JSONSerialization.jsonObject(with: Data(first[0].utf8)) as! [String: Any]
        XCTAssertEqual(one["total"] as? Int, 240)
        XCTAssertEqual(one["total_is_exact"] as? Bool, true)
        XCTAssertTrue(first[12].contains("\"items\":[]"), "past the last page: \(first[12])")
        // Without the search by the index of words, the remembered word is still answered, page for page.
        try await hideTheWordSearch(app, true)
        for page in 1...13 {
            let again = try app.client.get("/v1/quotes/search?q=\(query)&page_size=20&page=\(page)")
            XCTAssertEqual(again.text, first[page - 1], "page \(page) again")
        }
        // A word read whole and sorted is not remembered: it needs the search by the index of words.
        XCTAssertNotEqual(try app.client.get("/v1/quotes/search?q=ostrand&page_size=20").status, 200)
        try await hideTheWordSearch(app, false)
        XCTAssertEqual(try app.client.get("/v1/quotes/search?q=ostrand&page_size=20").status, 200)
        try await app.insertQuotes(["Vélmir again"])
        let changed = try app.client.get("/v1/quotes/search?q=\(query)&page_size=20").jsonObject()
        XCTAssertEqual(changed["total"] as? Int, 241, "a new version counts again")
        XCTAssertEqual((changed["items"] as? [[String: Any]])?.first?["text"] as? String, "Vélmir again")
        await app.stop()
    }
}
