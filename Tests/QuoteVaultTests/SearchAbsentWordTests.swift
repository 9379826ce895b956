import Foundation
import TestSupport
import XCTest

/// Migration 0047: a one-word search that no word of the vocabulary contains is answered from one probe of the
/// vocabulary's trigram index (total 0), and a word found only inside longer words is searched and ranked as
/// before.
final class SearchAbsentWordTests: XCTestCase {
    func testAnAbsentWordAnswersAnEmptyPageFromOneProbe() async throws {
        let app = try await TestApp.start()
        try await app.insertQuotes(["Ostvelmir sings", "The velmirbra river", "Plain words"])
        let absentWords = [
            ("xylophone", "keyword"), ("XYLOPHONE", "keyword"), ("nobody", "author"), ("ÉCOLÉ", "keyword"),
        ]
        for (query, type) in absentWords {
            let response = try app.search(query, type: type, extra: "&page_size=20")
            XCTAssertEqual(response.status, 200, query)
            XCTAssertEqual(try response.items().count, 0, query)
            XCTAssertEqual(try response.jsonObject()["total"] as? Int, 0, query)
            XCTAssertEqual(try response.jsonObject()["total_is_exact"] as? Bool, true, query)
            XCTAssertEqual(try response.jsonObject()["has_more"] as? Bool, false, query)
        }
        // The absent word reads the trigram index of the vocabulary only, not its key (the three tiers' statement).
        let absent = try app.scansInPlans(
            of: "SELECT * FROM search.quote_search_words_text('xylophone', '%xylophone%', '\\mxylophone\\M', "
                + "'\\mxylophone', NULL, 21, 0)")
        XCTAssertTrue(absent.contains("quote_vocabulary_word_trgm_idx"), absent)
        XCTAssertFalse(absent.contains("quote_vocabulary_pkey"), absent)
        // A word inside longer words is not absent: the tiers are read.
        let inside = try app.scansInPlans(
            of:
                "SELECT * FROM search.quote_search_words_text('velmir', '%velmir%', '\\mvelmir\\M', '\\mvelmir', NULL, 21, 0)"
        )
        XCTAssertTrue(inside.contains("quote_vocabulary_pkey"), inside)
        await app.stop()
    }

    func testAWordOnlyInsideLongerWordsRanksAsBefore() async throws {
        let app = try await TestApp.start()
        // Oldest first: inside a word, the start of a word, inside again (newest); and a quote without it.
        let ids = try await app.insertQuotes([
            "Ostvelmir sings", "The velmirbra river", "A kavelmir night", "Plain words", "Snake_case_words",
        ])
        let response = try app.search("velmir", type: "keyword", extra: "&page_size=20")
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, 3)
        let order = try response.items().map { $0["id"] as! String }
        XCTAssertEqual(order, [ids[1], ids[2], ids[0]].map { $0.uuidString.lowercased() })
        // An underscore is a word character and a literal: inside a longer word, found.
        let underscore = try app.search("e_cas", type: "keyword", extra: "&page_size=20").items().map {
            $0["text"] as! String
        }
        XCTAssertEqual(underscore, ["Snake_case_words"])
        XCTAssertEqual(
            try app.search("e_xas", type: "keyword", extra: "&page_size=20").jsonObject()["total"] as? Int, 0)
        await app.stop()
    }

    /// A word's exact total (100 to 1,000 matches) is remembered per version of the quotes, and the page alone is
    /// read again (the walk): every page and total is the one the first request got, and a change is seen at once.
    func testARepeatedWordSearchAnswersAsTheFirstTime() async throws {
        let app = try await TestApp.start { $0.answerCacheBytes = 0 }  // every request reaches the search
        let threshold = try await app.withConnection { connection in
            try connection.query("SELECT quote_search_limit('sorted_reads') AS n")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(threshold, 100, "QuoteSearch.sortedReads must follow quote_search_limit('sorted_reads')")
        // 240 matches over three tiers, interleaved in time: whole word, start of a word, inside a word.
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT (ARRAY['Velmir sings ', 'The velmirbra river ', 'A kavelmir night '])[i % 3 + 1] || i,
                       'Author ' || i, 'wisdom', '2020-01-01'::timestamptz + i * interval '1 minute'
                FROM generate_series(1, 240) AS i
                """)
        }
        for query in ["velmir", "VELMIR"] {
            var first: [String] = []
            for page in 1...13 {
                let path = "/v1/quotes/search?q=\(query)&page_size=20&page=\(page)"
                first.append(try app.client.get(path).text)
                XCTAssertEqual(try app.client.get(path).text, first[page - 1], "\(query) page \(page) again")
            }
            let one = try app.client.get("/v1/quotes/search?q=\(query)&page_size=20").jsonObject()
            XCTAssertEqual(one["total"] as? Int, 240, query)
            XCTAssertEqual(one["total_is_exact"] as? Bool, true, query)
            XCTAssertTrue(first[12].contains("\"items\":[]"), "past the last page: \(first[12])")
        }
        try await app.insertQuotes(["Velmir again"])
        let changed = try app.client.get("/v1/quotes/search?q=velmir&page_size=20").jsonObject()
        XCTAssertEqual(changed["total"] as? Int, 241, "a new version counts again")
        XCTAssertEqual(
            try app.client.get("/v1/quotes/search?q=velmir&page_size=1").items().first?["text"] as? String,
            "Velmir again")
        await app.stop()
    }
}
