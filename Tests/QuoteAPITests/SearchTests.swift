import Foundation
import TestSupport
import XCTest

/// `GET /v1/quotes/search`: literal, case-insensitive, Unicode-aware substring search with ranking.
final class SearchTests: XCTestCase {
    func testEveryResultContainsTheQueryOverManyQueries() async throws {
        let app = try await startTestApp()
        let corpus = [
            "Love is patient", "Lovely weather today", "Glove box", "Success is a journey", "WISDOM begins in wonder",
            "An École in Paris", "ÉCOLE normale", "100% sure", "snake_case and kebab-case", "a \\ backslash",
            "Kindness matters", "The road to success", "Unsuccessful attempts", "Laugh often", "wonderful world",
        ]
        try await app.insertQuotes(corpus)
        let queries = [
            "love", "LOVE", "ove", "success", "wis", "école", "ÉCOLE", "%", "_", "\\", "100%", "e_c", "a", "or",
            "zzz",
        ]
        for query in queries {
            let response = try app.search(query, extra: "&page_size=100")
            XCTAssertEqual(response.status, 200, query)
            let texts = try response.items().map { $0["text"] as! String }
            let expected = corpus.filter { $0.lowercased().contains(query.lowercased()) }
            XCTAssertEqual(Set(texts), Set(expected), "query \(query)")
            XCTAssertEqual(try response.jsonObject()["total"] as? Int, expected.count, query)
        }
    }

    func testWildcardsAreLiteral() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(["50% off", "fifty percent", "a_b", "axb"])
        XCTAssertEqual(try app.search("%").items().map { $0["text"] as! String }, ["50% off"])
        XCTAssertEqual(try app.search("_").items().map { $0["text"] as! String }, ["a_b"])
        XCTAssertEqual(try app.search("a_b").items().map { $0["text"] as! String }, ["a_b"])
    }

    func testRankingWholeWordThenPrefixThenAnywhereThenNewest() async throws {
        let app = try await startTestApp()
        let ids = try await app.insertQuotes([
            "Gloves on",  // anywhere (oldest)
            "Lovely day",  // word prefix
            "I love it",  // whole word
            "A glove",  // anywhere (newest)
            "Love, actually",  // whole word (newest)
        ])
        let order = try app.search("love").items().map { $0["id"] as! String }
        let expected = [ids[4], ids[2], ids[1], ids[3], ids[0]].map { $0.uuidString.lowercased() }
        XCTAssertEqual(order, expected)
    }

    func testRankingWithPunctuationAtTheQuerysEdges() async throws {
        let app = try await startTestApp()
        // Oldest first: the whole word, then the start of a word, then inside a word (newest).
        let ids = try await app.insertQuotes([
            "I love C++ a lot", "C++11 rocks", "ObjC++ too", "Say (hi) there", "(hi)s and",
        ])
        let cpp = try app.search("c++").items().map { $0["id"] as! String }
        XCTAssertEqual(cpp, [ids[0], ids[1], ids[2]].map { $0.uuidString.lowercased() })
        // A query that starts and ends with punctuation: "(hi)" followed by a letter is the start of a word.
        let hi = try app.search("(hi)").items().map { $0["id"] as! String }
        XCTAssertEqual(hi, [ids[3], ids[4]].map { $0.uuidString.lowercased() })
    }

    func testAuthorSearchAndCategoryFilter() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(["One"], author: "Mark Twain", category: "humor")
        try await app.insertQuotes(["Two"], author: "Mark Twain", category: "wisdom")
        try await app.insertQuotes(["Twain in the text"], author: "Someone Else", category: "humor")
        let byAuthor = try app.search("twain", type: "author")
        XCTAssertEqual(Set(try byAuthor.items().map { $0["text"] as! String }), ["One", "Two"])
        let filtered = try app.search("twain", type: "author", extra: "&category=humor")
        XCTAssertEqual(try filtered.items().map { $0["text"] as! String }, ["One"])
        let keyword = try app.search("twain")
        XCTAssertEqual(try keyword.items().map { $0["text"] as! String }, ["Twain in the text"])
    }

    func testInvalidQueriesAre422() async throws {
        let app = try await startTestApp()
        XCTAssertEqual(try app.client.get("/v1/quotes/search").status, 422)
        XCTAssertEqual(try app.search("   ").status, 422)
        XCTAssertEqual(try app.search(String(repeating: "a", count: 201)).status, 422)
        XCTAssertEqual(try app.search(String(repeating: "a", count: 200)).status, 200)
        // Characters are code points, as the OpenAPI maxLength counts them: 101 "e + combining accent" pairs
        // are 101 characters to Swift but 202 code points.
        XCTAssertEqual(try app.search(String(repeating: "e\u{301}", count: 101)).status, 422)
        XCTAssertEqual(try app.search("  padded  ").status, 200, "trimmed before the length check")
        let badType = try app.search("x", type: "title")
        XCTAssertEqual(badType.status, 422)
        XCTAssertEqual(try badType.errorFields(), ["type"])
        XCTAssertEqual(try app.search("x", extra: "&category=nope").status, 422)
        XCTAssertEqual(try app.search("x", extra: "&page_size=101").status, 422)
    }

    func testUnicodeWhitespaceAroundTheQueryIsTrimmed() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(["Love is patient", "Lovely weather", "Nothing here"])
        // Tab, newline, no-break space, em space, ideographic space, line separator: all Unicode White_Space.
        for padded in ["\tlove\n", "\u{00A0}love\u{2003}", "\u{3000}love\u{2028}"] {
            let response = try app.search(padded)
            XCTAssertEqual(response.status, 200, padded.debugDescription)
            XCTAssertEqual(
                Set(try response.items().map { $0["text"] as! String }), ["Love is patient", "Lovely weather"],
                padded.debugDescription)
        }
        XCTAssertEqual(try app.search("\u{00A0}\u{2003}\u{3000}\t").status, 422, "only whitespace")
        // Inside the query, whitespace is kept: this matches nothing.
        XCTAssertEqual(try app.search("love\u{00A0}is").items().count, 0)
    }

    func testRegexMetacharactersAndCombiningMarksAreLiteralInTheRanking() async throws {
        let app = try await startTestApp()
        let texts = [
            "C++ (and C) cost $5.00 [sale]", "a|b or c*d? ^x", "Cafe\u{301} de\u{301}ja\u{300} vu", "plain text",
        ]
        try await app.insertQuotes(texts)
        // Each query is a literal substring; the ranking's regexes must neither fail nor match anything else.
        let queries = [
            "C++", "(and C)", "$5.00", "[sale]", "a|b", "c*d?", "^x", "e\u{301}", "de\u{301}ja\u{300}", "\\",
        ]
        for query in queries {
            let response = try app.search(query)
            XCTAssertEqual(response.status, 200, query)
            let expected = texts.filter { $0.lowercased().contains(query.lowercased()) }
            XCTAssertEqual(Set(try response.items().map { $0["text"] as! String }), Set(expected), query)
        }
    }

    func testSearchPagesDoNotOverlap() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes((0..<25).map { "needle \($0)" })
        let first = try app.search("needle", extra: "&page_size=10&page=1").items().map { $0["id"] as! String }
        let second = try app.search("needle", extra: "&page_size=10&page=2").items().map { $0["id"] as! String }
        let third = try app.search("needle", extra: "&page_size=10&page=3")
        XCTAssertEqual(Set(first).intersection(second), [])
        XCTAssertEqual(try third.items().count, 5)
        XCTAssertEqual(try third.jsonObject()["has_more"] as? Bool, false)
        XCTAssertEqual(
            try app.search("needle", extra: "&page=9").jsonObject()["total"] as? Int, 25, "total past the end")
    }

    func testSearchUsesTheTrigramIndex() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes((0..<200).map { "filler quote number \($0)" })
        let plan = try await app.withConnection { connection in
            try connection.execute(unsafeSQL: "ANALYZE quotes; SET enable_seqscan = off")
            return try connection.query("EXPLAIN SELECT id FROM quotes WHERE text ILIKE '%number 1%'")
                .map { try $0.decode(at: 0, as: String.self) }.joined(separator: "\n")
        }
        XCTAssertTrue(plan.contains("quotes_text_trgm_idx"), plan)
    }

    // MARK: - Many matches: bounded total, tier-by-tier walk

    /// Inserts `count` quotes of `text(i)` at `start + i / 3` seconds (three quotes per timestamp, so ties on
    /// `created_at` are broken by id).
    private func insertMany(_ app: TestApp, count: Int, text: String, start: String = "2020-01-01") async throws {
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT replace(\(text), '#', i::text), 'Bulk Author', 'wisdom',
                       \(start)::timestamptz + (i / 3) * interval '1 second'
                FROM generate_series(1, \(count)) AS i
                """)
        }
    }

    private func totals(_ response: HTTPTestResponse) throws -> (total: Int?, exact: Bool?) {
        let object = try response.jsonObject()
        return (object["total"] as? Int, object["total_is_exact"] as? Bool)
    }

    func testTotalIsExactUpToOneThousandMatchesThenStops() async throws {
        let app = try await startTestApp()
        try await insertMany(app, count: 1_000, text: "a needle number #")
        try await app.insertQuotes(["no match here"])
        var response = try app.search("needle")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try totals(response).total, 1_000)
        XCTAssertEqual(try totals(response).exact, true, "1,000 matches: exact")
        XCTAssertEqual(try response.items().count, 20)

        // One more match: the next answer (a new version of the quotes) stops counting.
        try await app.insertQuotes(["the last needle"])
        response = try app.search("needle")
        XCTAssertEqual(try totals(response).total, 1_000)
        XCTAssertEqual(try totals(response).exact, false, "1,001 matches: not exact")
        XCTAssertEqual(
            try response.items().first?["text"] as? String, "the last needle", "newest whole-word match first")
        // Asked again (the remembered "more than 1,000" path), the same answer.
        let again = try app.search("needle")
        XCTAssertEqual(try totals(again).exact, false)
        XCTAssertEqual(try again.items().map { $0["id"] as! String }, try response.items().map { $0["id"] as! String })

        // Back to 999 matches: exact again, although the query was remembered as having more.
        try await app.withConnection { connection in
            _ = try connection.query(
                "DELETE FROM quotes WHERE id IN (SELECT id FROM quotes WHERE text ILIKE '%needle%' LIMIT 2)")
        }
        response = try app.search("needle")
        XCTAssertEqual(try totals(response).total, 999)
        XCTAssertEqual(try totals(response).exact, true)

        // total_is_exact is in every search answer, also with no match at all; not in the other lists.
        XCTAssertEqual(try totals(try app.search("absent-term")).exact, true)
        XCTAssertEqual(try totals(try app.search("absent-term")).total, 0)
        XCTAssertNil(try app.client.get("/v1/quotes").jsonObject()["total_is_exact"])
    }

    func testWalkingEveryPageOfACommonTermReturnsEachMatchOnceInRankOrder() async throws {
        let app = try await startTestApp()
        // 1,200 matches in three tiers whose dates interleave, 3 quotes per timestamp; few quotes have longer
        // words starting with "needle" (400: that tier is read from the index of words).
        try await insertMany(app, count: 400, text: "haystackneedle anywhere #", start: "2021-01-01")
        try await insertMany(app, count: 400, text: "a needle as a word #", start: "2020-06-01")
        try await insertMany(app, count: 400, text: "needles start a word #", start: "2020-12-31")
        try await insertMany(app, count: 50, text: "unrelated hay #", start: "2022-01-01")
        let tiers = "CASE WHEN text LIKE 'a needle%' THEN 0 WHEN text LIKE 'needles%' THEN 1 ELSE 2 END"
        try await assertWalk(app, "NEEDLE", expectedCount: 1_200, tier: tiers, pageSizes: [100, 37])
        // Two words, fewer than 1,000 matches: ranked in full.
        try await assertWalk(app, "a NEEDLE", expectedCount: 400, tier: "0", pageSizes: [100])
        // Past the end: no items, no more.
        let past = try app.search("needle", extra: "&page_size=100&page=13")
        XCTAssertEqual(try past.items().count, 0)
        XCTAssertEqual(try past.jsonObject()["has_more"] as? Bool, false)
    }

    func testAWordInsideManyWordsOfEachQuoteIsStillCountedExactly() async throws {
        let app = try await startTestApp()
        // 900 quotes, each with six distinct words containing "ab": 5,400 entries in the index of words, more
        // than it is read for, yet 900 matches: counted through the trigram index instead, exactly.
        try await insertMany(app, count: 900, text: "ab abc xab xabx abd abe #")
        let response = try app.search("AB", extra: "&page_size=50&page=18")
        XCTAssertEqual(try totals(response).total, 900)
        XCTAssertEqual(try totals(response).exact, true)
        XCTAssertEqual(try response.items().count, 50)
        XCTAssertEqual(try response.jsonObject()["has_more"] as? Bool, false)
    }

    func testWalkingWhenManyQuotesHaveLongerWordsAndWithinACategory() async throws {
        let app = try await startTestApp()
        // 2,100 quotes with longer words starting with "needle" (more than the 2,000 the index of words is read
        // for: that tier is walked), some also holding the word itself (tier 0 wins), in two categories.
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT CASE WHEN i % 2 = 1 THEN 'Needlework: ' || i WHEN i % 7 = 0 THEN 'needles and a needle ' || i
                            ELSE 'needled ' || i END,
                       'Bulk Author', CASE WHEN i % 3 = 0 THEN 'humor' ELSE 'love' END,
                       '2020-01-01'::timestamptz + (i / 2) * interval '1 second'
                FROM generate_series(1, 2100) AS i
                """)
        }
        try await insertMany(app, count: 60, text: "haystackneedle #", start: "2019-01-01")
        let tiers = "CASE WHEN text LIKE '%a needle %' THEN 0 WHEN text ILIKE 'needle%' THEN 1 ELSE 2 END"
        try await assertWalk(app, "needle", expectedCount: 2_160, tier: tiers, pageSizes: [100])
        try await assertWalk(app, "needle", category: "humor", expectedCount: 700, tier: tiers, pageSizes: [100])
        // Not one word (punctuation): every tier found by its regular expression.
        try await assertWalk(app, "WORK:", expectedCount: 1_050, tier: "2", pageSizes: [100])
        // Few quotes in tiers 0 and 1, 2,100 in tier 2: tier 2 is walked while a page needs fewer rows than it
        // holds entries (pages 2-20 of 100), then read from the index of words (pages 21-22).
        try await insertMany(app, count: 50, text: "a thimble #", start: "2018-01-01")
        try await insertMany(app, count: 50, text: "thimbles #", start: "2018-02-01")
        try await insertMany(app, count: 2_100, text: "xthimble #", start: "2018-03-01")
        let thimbleTiers = "CASE WHEN text LIKE 'a thimble%' THEN 0 WHEN text LIKE 'thimbles%' THEN 1 ELSE 2 END"
        try await assertWalk(app, "thimble", expectedCount: 2_200, tier: thimbleTiers, pageSizes: [100])
        // Tier 2 spread over 200 words (read from the index of words) and over 201 (walked).
        for (query, words) in [("gadget", 200), ("widget", 201)] {
            try await app.withConnection { connection in
                _ = try connection.query(
                    """
                    INSERT INTO quotes (text, author, category, created_at)
                    SELECT 'w' || (i % \(words)) || \(query) || ' ' || i, 'Bulk Author', 'wisdom',
                           '2017-01-01'::timestamptz + (i / 2) * interval '1 second'
                    FROM generate_series(1, 1100) AS i
                    """)
            }
            try await assertWalk(app, query, expectedCount: 1_100, tier: "2", pageSizes: [100])
        }
    }

    func testTheIndexOfWordsFollowsEveryChangeToQuotes() async throws {
        let app = try await startTestApp()
        // The vocabulary must always equal the words (and their numbers of quotes) recomputed from quotes' texts
        // and authors, whoever changes them and how: a word no quote uses any more is forgotten.
        func assertInStep(_ step: String, file: StaticString = #filePath, line: UInt = #line) async throws {
            let difference = try await app.withConnection { connection in
                try connection.query(
                    """
                    WITH recomputed AS (
                        SELECT 't'::"char" AS field, w AS word, count(*) AS uses FROM quotes, quote_words_of(text) AS w
                        GROUP BY w
                        UNION ALL SELECT 'a', w, count(*) FROM quotes, quote_words_of(author) AS w GROUP BY w)
                    SELECT count(*) AS n FROM (
                        (SELECT field, word, uses FROM quote_vocabulary EXCEPT ALL SELECT * FROM recomputed)
                        UNION ALL
                        (SELECT * FROM recomputed EXCEPT ALL SELECT field, word, uses FROM quote_vocabulary)) AS d
                    """)[0].decode("n", as: Int.self)
            }
            XCTAssertEqual(difference, 0, step, file: file, line: line)
        }
        let ids = try await app.insertQuotes(["Love, LOVE and lovely love", "Ünïcode wörds_and 42 numbers", "plain"])
        try await insertMany(app, count: 500, text: "bulk words #")
        try await assertInStep("inserted")
        let words = try await app.withConnection { connection in
            try connection.query(
                "SELECT array_agg(w ORDER BY w) AS words FROM quote_words_of('Love, LOVE and lovely love') AS w")[0]
                .decode("words", as: [String].self)
        }
        XCTAssertEqual(words, ["and", "love", "lovely"], "distinct lower-case words")
        try await app.withConnection { connection in
            _ = try connection.query("UPDATE quotes SET text = 'changed text entirely' WHERE id = \(ids[0])")
            _ = try connection.query("UPDATE quotes SET category = 'humor' WHERE id = \(ids[1])")
            _ = try connection.query("UPDATE quotes SET author = 'Someone Else' WHERE id = \(ids[2])")
            _ = try connection.query(
                "UPDATE quotes SET created_at = created_at - interval '1 day' WHERE text LIKE 'bulk words 1%'")
        }
        try await assertInStep("updated")
        XCTAssertEqual(try app.search("lovely").status, 200)
        XCTAssertEqual(try totals(try app.search("lovely")).total, 0, "the old words are gone")
        try await app.withConnection { connection in
            _ = try connection.query("DELETE FROM quotes WHERE text LIKE 'bulk words 2%'")
        }
        try await assertInStep("deleted")
        try await app.withConnection { connection in
            _ = try connection.query("TRUNCATE quotes CASCADE")
        }
        try await assertInStep("truncated")
    }

    /// Walks every page of `query` (more than 1,000 matches: the walk answers) and checks it against the
    /// contract's order computed here: `tier` (SQL over `text`), then newest, then id (as PostgreSQL orders uuids).
    private func assertWalk(
        _ app: TestApp, _ query: String, category: String? = nil, expectedCount: Int, tier: String, pageSizes: [Int],
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        struct Match { let id: String; let tier: Int; let at: Date }
        let matches: [Match] = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT id, \(unsafeSQL: tier) AS tier, created_at FROM quotes
                WHERE text ILIKE '%' || \(query) || '%' AND (\(category)::text IS NULL OR category = \(category))
                """
            ).map { row in
                Match(
                    id: try row.decode("id", as: UUID.self).uuidString.lowercased(),
                    tier: try row.decode("tier", as: Int.self), at: try row.decode("created_at", as: Date.self))
            }
        }
        let expected = matches.sorted { (a: Match, b: Match) -> Bool in
            if a.tier != b.tier { return a.tier < b.tier }
            if a.at != b.at { return a.at > b.at }
            return a.id > b.id
        }.map(\.id)
        XCTAssertEqual(expected.count, expectedCount, file: file, line: line)
        let categoryParameter = category.map { "&category=\($0)" } ?? ""
        for pageSize in pageSizes {
            var walked: [String] = []
            var page = 1
            while page <= 200 {
                let response = try app.search(query, extra: "&page_size=\(pageSize)&page=\(page)\(categoryParameter)")
                XCTAssertEqual(response.status, 200, file: file, line: line)
                XCTAssertEqual(try totals(response).exact, expectedCount <= 1_000, file: file, line: line)
                let ids = try response.items().map { $0["id"] as! String }
                walked += ids
                let hasMore = try response.jsonObject()["has_more"] as? Bool
                XCTAssertEqual(
                    hasMore, walked.count < expected.count, "has_more on page \(page)", file: file, line: line)
                if hasMore != true { break }
                page += 1
            }
            XCTAssertEqual(
                walked.count, Set(walked).count, "no repeats (\(query), page size \(pageSize))", file: file, line: line)
            XCTAssertEqual(
                walked, expected, "every match once, in rank order (\(query), page size \(pageSize))",
                file: file, line: line)
        }
    }

    func testAuthorSearchWithManyMatchesRanksAndFiltersByCategory() async throws {
        let app = try await startTestApp()
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT 'quote ' || i, CASE i % 3 WHEN 0 THEN 'Ann Lee' WHEN 1 THEN 'Leeroy Jenkins' \
                ELSE 'Ashlee Simpson' END,
                       CASE WHEN i % 2 = 0 THEN 'humor' ELSE 'love' END, \
                '2020-01-01'::timestamptz + i * interval '1 minute'
                FROM generate_series(1, 3000) AS i
                """)
        }
        let response = try app.search("lee", type: "author", extra: "&page_size=100&page=10")
        XCTAssertEqual(try totals(response).exact, false)
        XCTAssertEqual(
            Set(try response.items().map { $0["author"] as! String }), ["Ann Lee"], "rows 901-1000: whole word")
        let page11 = try app.search("lee", type: "author", extra: "&page_size=100&page=11")
        XCTAssertEqual(Set(try page11.items().map { $0["author"] as! String }), ["Leeroy Jenkins"], "then word start")
        let humor = try app.search("lee", type: "author", extra: "&category=humor&page_size=100")
        XCTAssertEqual(Set(try humor.items().map { $0["category"] as! String }), ["humor"])
        XCTAssertEqual(try totals(humor).exact, false, "1,500 humor matches")
    }
}
