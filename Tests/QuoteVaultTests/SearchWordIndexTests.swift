import Foundation
import Logging
import PGClient
import TestSupport
import XCTest

/// Searches through the index of words (migrations 0013-0016): several words' ranking, the walks' early stop
/// shown by the plans of the real search functions, one word's window of ordered words, and the vocabulary
/// forgetting unused words.
final class SearchWordIndexTests: XCTestCase {
    /// `count` quotes by `author`, one a minute from `start`, each text distinct.
    private func insert(_ app: TestApp, count: Int, author: String, text: String = "words", start: String)
        async throws
    {
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT \(text) || ' ' || i, \(author), 'wisdom', \(start)::timestamptz + i * interval '1 minute'
                FROM generate_series(1, \(count)) AS i
                """)
        }
    }

    func testSeveralWordsRankByTierThenNewestAndTheWalkStopsEarly() async throws {
        let app = try await TestApp.start()
        // 1,800 matches of "ada lovelace": whole (1,200), start of a word (300), inside a word (300); beside 1,200
        // quotes of another author, every other minute. The tiers' dates interleave.
        try await insert(app, count: 1_200, author: "Ada Lovelace", start: "2020-01-01 00:00")
        try await insert(app, count: 300, author: "Ada Lovelaceson", start: "2020-01-01 05:00:10")
        try await insert(app, count: 300, author: "Nada Lovelace", start: "2020-01-01 10:00:20")
        try await insert(app, count: 1_200, author: "Grace Hopper", start: "2020-01-01 00:00:30")
        let first = try app.search("ADA lovelace", type: "author", extra: "&page_size=20")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(try first.jsonObject()["total_is_exact"] as? Bool, false, "1,800 matches")
        let newest = try first.items()
        XCTAssertEqual(Set(newest.map { $0["author"] as! String }), ["Ada Lovelace"], "the whole words first")
        XCTAssertEqual(newest.first?["text"] as? String, "words 1200", "newest first")
        // Rows 1,201-1,300: the start of a word; 1,501-1,600: inside a word.
        let startOfWord = try app.search("ada lovelace", type: "author", extra: "&page_size=100&page=13").items()
        XCTAssertEqual(Set(startOfWord.map { $0["author"] as! String }), ["Ada Lovelaceson"])
        let inside = try app.search("ada lovelace", type: "author", extra: "&page_size=100&page=16").items()
        XCTAssertEqual(Set(inside.map { $0["author"] as! String }), ["Nada Lovelace"])

        // The first page walks the newest-first index and stops after the rows it needs (21 matches, every other
        // entry near the newest): not the 3,000 quotes nor the 1,800 matches.
        let plans = try app.scansInPlans(
            of: """
                SELECT * FROM search.quote_search_walk_author('%ada lovelace%', '\\mada lovelace\\M', '\\mada lovelace',
                                                       'ada lovelace', NULL, 21)
                """)
        let walk = try XCTUnwrap(plans.split(separator: "\n").first { $0.contains("quotes_newest_author_idx") }, plans)
        let actual = try XCTUnwrap(walk.range(of: "actual rows="), String(walk))
        let rows = try XCTUnwrap(Int(walk[actual.upperBound...].prefix { $0.isNumber }), String(walk))
        XCTAssertLessThanOrEqual(rows, 60, plans)
        await app.stop()
    }

    /// 2,100 matches of "the river": whole words (1,500, one a minute), the start of a word (300, the newest) and
    /// inside a word (300, every five minutes, among the whole words), beside 3,000 quotes holding "the" only.
    private func insertTheRiver(_ app: TestApp) async throws {
        try await insert(app, count: 1_500, author: "Someone", text: "the river", start: "2020-01-01 00:00")
        try await insert(app, count: 300, author: "Someone", text: "the riverside", start: "2021-01-01 00:00")
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT 'bathe river ' || i, 'Someone', 'wisdom',
                       '2020-01-01 00:00:30'::timestamptz + i * interval '5 minutes'
                FROM generate_series(1, 300) AS i
                """)
        }
        try await insert(app, count: 3_000, author: "Someone", text: "the sea", start: "2020-01-01 00:00:15")
        // the search weighs a word's quotes against the table's rows (pg_class.reltuples)
        try await app.withConnection { connection in _ = try connection.query("ANALYZE quotes") }
    }

    private func assertTheRiverRanks(_ app: TestApp, _ context: String) throws {
        let first = try app.search("The River", type: "keyword", extra: "&page_size=20")
        XCTAssertEqual(try first.jsonObject()["total_is_exact"] as? Bool, false, "2,100 matches; \(context)")
        XCTAssertEqual(
            try first.items().map { $0["text"] as! String }, (1_481...1_500).reversed().map { "the river \($0)" },
            "the whole words first, newest first, before newer quotes of later tiers; \(context)")
        // Rows 1,501-1,600: the start of a word; 1,801-1,900: inside a word.
        let startOfWord = try app.search("the river", type: "keyword", extra: "&page_size=100&page=16").items()
        func texts(_ prefix: String, _ range: ClosedRange<Int>) -> [String] {
            range.reversed().map { "\(prefix) \($0)" }
        }
        XCTAssertEqual(startOfWord.map { $0["text"] as! String }, texts("the riverside", 201...300), context)
        let inside = try app.search("the river", type: "keyword", extra: "&page_size=100&page=19").items()
        XCTAssertEqual(inside.map { $0["text"] as! String }, texts("bathe river", 201...300), context)
        let deep = try app.search("the river", type: "keyword", extra: "&page_size=100&page=4").items()
        XCTAssertEqual(deep.map { $0["text"] as! String }, texts("the river", 1_101...1_200), context)
    }

    func testSeveralWordsAreReadNewestFirstFromTheWindowOfOrderedWords() async throws {
        let app = try await TestApp.start()
        try await insertTheRiver(app)
        try assertTheRiverRanks(app, "all in the window")
        // The first page reads the rarest word's ("river") newest entries in quote_words_newest, each tested, and
        // stops with the page: 21 matches among about 25 entries, not the 1,800 quotes holding "river"; the walks
        // of the later tiers are not started, and no trigram index of quotes is asked.
        let plans = try app.scansInPlans(
            of: """
                SELECT * FROM search.quote_search_walk_text('%the river%', '\\mthe river\\M', '\\mthe river', 'the river',
                                                     NULL, 21)
                """)
        let scan = try XCTUnwrap(plans.split(separator: "\n").first { $0.contains("quote_words_newest_pkey") }, plans)
        let actual = try XCTUnwrap(scan.range(of: "actual rows="), String(scan))
        let rows = try XCTUnwrap(Int(scan[actual.upperBound...].prefix { $0.isNumber }), String(scan))
        XCTAssertLessThanOrEqual(rows, 60, plans)
        let walks = plans.split(separator: "\n").filter { $0.contains("quotes_newest_author_idx") }
        XCTAssertTrue(walks.allSatisfy { $0.contains("never executed") }, plans)
        XCTAssertFalse(plans.contains("quotes_text_trgm_idx"), plans)

        // Older than the window (as quote_words_newest_trim moves it): from the word index, span by span, in order.
        try await app.withConnection { connection in
            _ = try connection.query("UPDATE quote_words_window SET since = '2020-01-02 00:50'")
            _ = try connection.query("DELETE FROM quote_words_newest WHERE created_at < '2020-01-02 00:50'")
        }
        try assertTheRiverRanks(app, "the window holds 11 of the whole words")
        await app.stop()
    }

    func testFewMatchesOfSeveralWordsAreReadFromTheWordIndexRankedInFull() async throws {
        let app = try await TestApp.start()
        try await insert(app, count: 30, author: "Lao Tzu", start: "2020-01-01")
        try await insert(app, count: 5, author: "Lao Tzus", start: "2021-01-01")
        try await insert(app, count: 5, author: "Blao Tzu", start: "2022-01-01")
        try await insert(app, count: 2_000, author: "Someone Else", start: "2019-01-01")
        let response = try app.search("lao tzu", type: "author", extra: "&page_size=100")
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, 40)
        XCTAssertEqual(try response.jsonObject()["total_is_exact"] as? Bool, true)
        let authors = try response.items().map { $0["author"] as! String }
        XCTAssertEqual(
            authors,
            Array(repeating: "Lao Tzu", count: 30) + Array(repeating: "Lao Tzus", count: 5)
                + Array(repeating: "Blao Tzu", count: 5))
        XCTAssertEqual(try response.items().first?["text"] as? String, "words 30", "newest first within a tier")
        // The candidates come from the word index of authors, not from a walk or the trigram index.
        let plans = try app.scansInPlans(
            of: """
                SELECT * FROM search.quote_search_words_author('lao tzu', '%lao tzu%', '\\mlao tzu\\M', '\\mlao tzu', NULL, 21, 0)
                """)
        XCTAssertTrue(plans.contains("quotes_author_words_idx"), plans)
        XCTAssertFalse(plans.contains("quotes_author_trgm_idx"), plans)
        XCTAssertFalse(plans.contains("quotes_newest_author_idx"), plans)
        await app.stop()
    }

    func testFewMatchesOfTwoWordsOftenApartAreReadThroughTheirPair() async throws {
        let app = try await TestApp.start()
        // 40 matches of "ephemeral fjord" (30 as whole words, 10 inside a longer last word), beside 1,500 quotes
        // holding both words apart: the pair, not the 1,540 quotes holding both words, selects the candidates.
        try await insert(app, count: 30, author: "Someone", text: "an ephemeral fjord", start: "2020-01-01")
        try await insert(app, count: 10, author: "Someone", text: "ephemeral fjords", start: "2021-01-01")
        try await insert(app, count: 1_500, author: "Someone", text: "a fjord, never ephemeral", start: "2019-01-01")
        try await insert(app, count: 1_000, author: "Someone", text: "elsewhere", start: "2018-01-01")
        try await app.withConnection { connection in _ = try connection.query("ANALYZE quotes") }
        let response = try app.search("Ephemeral Fjord", type: "keyword", extra: "&page_size=100")
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, 40)
        XCTAssertEqual(try response.jsonObject()["total_is_exact"] as? Bool, true)
        XCTAssertEqual(
            try response.items().map { $0["text"] as! String },
            (1...30).reversed().map { "an ephemeral fjord \($0)" }
                + (1...10).reversed().map { "ephemeral fjords \($0)" })
        // The real function reads about the 40 quotes holding the pair, not the 1,540 holding both words: the word
        // index is given no words, and the trigram index is not asked.
        let plans = try app.scansInPlans(
            of: """
                SELECT * FROM search.quote_search_words_text('ephemeral fjord', '%ephemeral fjord%', '\\mephemeral fjord\\M',
                                                      '\\mephemeral fjord', NULL, 21, 0)
                """)
        let scan = try XCTUnwrap(plans.split(separator: "\n").first { $0.contains("quotes_text_pairs_idx") }, plans)
        let actual = try XCTUnwrap(scan.range(of: "actual rows="), String(scan))
        let rows = try XCTUnwrap(Int(scan[actual.upperBound...].prefix { $0.isNumber }), String(scan))
        XCTAssertGreaterThanOrEqual(rows, 40, plans)
        XCTAssertLessThanOrEqual(rows, 60, plans)
        let words = plans.split(separator: "\n").filter { $0.contains("quotes_text_words_idx") }
        XCTAssertTrue(words.allSatisfy { $0.contains("actual rows=0 ") }, plans)
        XCTAssertFalse(plans.contains("quotes_text_trgm_idx"), plans)
        // The count that takes over when the words hold too many candidates reads the pair too, not the trigrams.
        let ranked =
            "SELECT total FROM search.quote_search_ranked_text('%ephemeral fjord%', '\\mephemeral fjord\\M', "
            + "'\\mephemeral fjord', NULL, 21, 0)"
        let total = try await app.withConnection { connection in
            try connection.query(PGQuery(unsafeSQL: ranked)).first?.decode("total", as: Int.self)
        }
        XCTAssertEqual(total, 40)
        let rankedPlans = try app.scansInPlans(of: ranked)
        XCTAssertTrue(rankedPlans.contains("quotes_text_pairs_idx"), rankedPlans)
        XCTAssertTrue(
            rankedPlans.split(separator: "\n").filter { $0.contains("quotes_text_trgm_idx") }
                .allSatisfy { $0.contains("never executed") }, rankedPlans)
        await app.stop()
    }

    func testOneWordIsReadNewestFirstFromTheWindowOfOrderedWords() async throws {
        let app = try await TestApp.start()
        try await insert(app, count: 3_000, author: "Someone", text: "zanzibar", start: "2020-01-01")
        try await insert(app, count: 500, author: "Someone", text: "elsewhere", start: "2021-01-01")
        let first = try app.search("Zanzibar", type: "keyword", extra: "&page_size=20")
        XCTAssertEqual(
            try first.items().map { $0["text"] as! String },
            (2_981...3_000).reversed().map { "zanzibar \($0)" })
        // The page's rows are the newest entries of the word in quote_words_newest: 21 read, not the 3,000.
        let plans = try app.scansInPlans(
            of: """
                SELECT * FROM search.quote_search_walk_text('%zanzibar%', '\\mzanzibar\\M', '\\mzanzibar', 'zanzibar', NULL, 21)
                """)
        let scan = try XCTUnwrap(plans.split(separator: "\n").first { $0.contains("quote_words_newest_pkey") }, plans)
        let actual = try XCTUnwrap(scan.range(of: "actual rows="), String(scan))
        XCTAssertEqual(Int(scan[actual.upperBound...].prefix { $0.isNumber }), 21, plans)
        XCTAssertFalse(plans.contains("quotes_text_words_idx"), plans)
        await app.stop()
    }

    func testQuotesOlderThanTheWindowComeFromTheWordIndexInOrder() async throws {
        let app = try await TestApp.start()
        try await insert(app, count: 100, author: "Someone", text: "zanzibar", start: "2020-01-01")
        try await insert(app, count: 100, author: "Someone", text: "elsewhere", start: "2020-01-01 00:00:30")
        // The window moved past most of them, as quote_words_newest_trim moves it: 10 left inside.
        try await app.withConnection { connection in
            _ = try connection.query("UPDATE quote_words_window SET since = '2020-01-01 01:31'")
            _ = try connection.query("DELETE FROM quote_words_newest WHERE created_at < '2020-01-01 01:31'")
        }
        for (page, newest) in [(1, 100), (2, 75), (4, 25)] {
            let items = try app.search("zanzibar", type: "keyword", extra: "&page_size=25&page=\(page)").items()
            XCTAssertEqual(
                items.map { $0["text"] as! String },
                (newest - 24...newest).reversed().map { "zanzibar \($0)" }, "page \(page)")
        }
        let inCategory = try app.search("zanzibar", type: "keyword", extra: "&page_size=30&category=wisdom")
        XCTAssertEqual(try inCategory.items().count, 30)
        XCTAssertEqual(try inCategory.items().last?["text"] as? String, "zanzibar 71")
        await app.stop()
    }

    func testALaterTierOfOneWordComesFromTheWindowWithoutTheQuotesOfEarlierTiers() async throws {
        let app = try await TestApp.start()
        try await insert(app, count: 10, author: "Someone", text: "zanzibar", start: "2019-01-01")
        // of tier 0, though they hold a word of tier 1 too
        try await insert(app, count: 5, author: "Someone", text: "zanzibar and zanzibarian", start: "2019-06-01")
        try await insert(app, count: 30, author: "Someone", text: "zanzibarian", start: "2020-01-01")
        // tier 1 held by a small share of the quotes: read from the index of words, not walked
        try await insert(app, count: 1_000, author: "Someone", text: "elsewhere", start: "2018-01-01")
        try await app.withConnection { connection in _ = try connection.query("ANALYZE quotes") }
        func call(_ wanted: Int) -> String {
            "SELECT text FROM search.quote_search_walk_text('%zanzibar%', '\\mzanzibar\\M', '\\mzanzibar', 'zanzibar', NULL, "
                + "\(wanted))"
        }
        func walk(_ wanted: Int) async throws -> [String] {
            let sql = call(wanted)
            return try await app.withConnection { connection in
                try connection.query(PGQuery(unsafeSQL: sql)).map { try $0.decode("text", as: String.self) }
            }
        }
        func texts(_ prefix: String, _ range: ClosedRange<Int>) -> [String] {
            range.reversed().map { "\(prefix) \($0)" }
        }
        let tierZero = texts("zanzibar and zanzibarian", 1...5) + texts("zanzibar", 1...10)
        // Tier 1's newest six in the window of ordered words are all of tier 1: the page, not walked.
        let twentyOne = try await walk(21)
        XCTAssertEqual(twentyOne, tierZero + texts("zanzibarian", 25...30))
        let plans = try app.scansInPlans(of: call(21))
        let walks = plans.split(separator: "\n").filter { $0.contains("quotes_newest_author_idx") }
        XCTAssertTrue(walks.allSatisfy { $0.contains("never executed") }, plans)
        // Past its thirty, the five of tier 0 are met: tier 1 is read again from the word index.
        let fifty = try await walk(50)
        XCTAssertEqual(fifty, tierZero + texts("zanzibarian", 1...30))
        // The window moved past most of them: the newest ten of tier 1 from it, older ones from the word index.
        try await app.withConnection { connection in
            _ = try connection.query("UPDATE quote_words_window SET since = '2020-01-01 00:21'")
            _ = try connection.query("DELETE FROM quote_words_newest WHERE created_at < '2020-01-01 00:21'")
        }
        let forty = try await walk(40)
        XCTAssertEqual(forty, tierZero + texts("zanzibarian", 6...30))
        await app.stop()
    }

    func testTheVocabularyForgetsWordsNoQuoteUsesAnyMore() async throws {
        let app = try await TestApp.start()
        let ids = try await app.insertQuotes(["a zanzibar tale", "another zanzibar", "plain words"])
        func uses(_ word: String) async throws -> Int? {
            try await app.withConnection { connection in
                try connection.query("SELECT uses FROM quote_vocabulary WHERE field = 't' AND word = \(word)")
                    .first.map { try $0.decode("uses", as: Int.self) }
            }
        }
        let zanzibar = try await uses("zanzibar")
        XCTAssertEqual(zanzibar, 2)
        try await app.withConnection { connection in
            _ = try connection.query("DELETE FROM quotes WHERE id = \(ids[0])")
        }
        let afterOne = try await uses("zanzibar")
        XCTAssertEqual(afterOne, 1)
        let tale = try await uses("tale")
        XCTAssertNil(tale, "its only quote deleted")
        try await app.withConnection { connection in
            _ = try connection.query("UPDATE quotes SET text = 'renamed' WHERE id = \(ids[1])")
        }
        let afterUpdate = try await uses("zanzibar")
        XCTAssertNil(afterUpdate, "its last quote changed")
        XCTAssertEqual(try app.search("zanzibar", type: "keyword").jsonObject()["total"] as? Int, 0)
        XCTAssertEqual(try app.search("renamed", type: "keyword").jsonObject()["total"] as? Int, 1)
        await app.stop()
    }
}
