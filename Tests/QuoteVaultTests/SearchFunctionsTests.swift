import Foundation
import Logging
import PGClient
@testable import QuoteVault
import TestSupport
import XCTest

/// The search functions of `schema/` called on their own, over PGClient, with the patterns `QuoteSearch` builds:
/// what each entry point finds and in which order (docs/search.md). No HTTP server is involved.
final class SearchFunctionsTests: XCTestCase {
    /// One quote a day from 2020-01-01, in this order (the last is the newest).
    private static let quotes: [(text: String, author: String)] = [
        ("Love conquers all.", "Ada Lovelace"),
        ("Lovely weather today", "Lao Tzu"),
        ("A glove in the snow", "Ada Byron"),
        ("I love the river", "Grace Hopper"),
        ("Café au lait, naïve élan", "Ann Lee"),
        ("Spring rain; quiet fjord", "Ann Lee"),
        ("The fjord was quiet", "Ann Lee"),
        ("50% off: well_being", "Bob Adams"),
        ("wellxbeing, 50 percent", "Bob Adams"),
    ]

    /// A database migrated the way the server migrates it (migrations, then `schema/`), holding `quotes`.
    private func database() async throws -> PGConnection {
        let url = try TestDatabase.makeDatabase()
        let pool = PGPool(connectionString: url, size: 1, logger: Logger(label: "test"))
        defer { pool.shutdown() }
        try await Migrator(
            migrationsDirectory: TestApp.repositoryRoot.appendingPathComponent("migrations"),
            logger: Logger(label: "test")
        ).migrate(using: pool)
        let connection = try PGConnection(connectionString: url)
        for (day, quote) in Self.quotes.enumerated() {
            try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                VALUES (\(quote.text), \(quote.author), 'wisdom', '2020-01-01'::timestamptz + \(day) * interval '1 day')
                """)
        }
        try connection.query("ANALYZE quotes")
        return connection
    }

    /// `quote_search_words_<column>`: the total (nil: it cannot tell cheaply) and the page's texts or authors.
    private func words(_ connection: PGConnection, _ query: String, column: String = "text") throws -> (
        total: Int?, found: [String]
    ) {
        let p = QuoteSearch.Patterns(query)
        let rows = try connection.query(
            """
            SELECT total, \(unsafeSQL: column) AS found FROM search.quote_search_words_\(unsafeSQL: column)(\
            \(p.query), \(p.contains), \(p.wholeWord), \(p.wordStart), NULL, 100, 0)
            """)
        return (
            try rows[0].decode("total", as: Int?.self), try rows.compactMap { try $0.decode("found", as: String?.self) }
        )
    }

    /// `quote_search_ranked_<column>`: every match (at most 1,001) ranked in full.
    private func ranked(_ connection: PGConnection, _ query: String, column: String = "text") throws -> (
        total: Int, found: [String]
    ) {
        let p = QuoteSearch.Patterns(query)
        let rows = try connection.query(
            """
            SELECT total, \(unsafeSQL: column) AS found FROM search.quote_search_ranked_\(unsafeSQL: column)(\
            \(p.contains), \(p.wholeWord), \(p.wordStart), NULL, 100, 0)
            """)
        return (
            try rows[0].decode("total", as: Int.self), try rows.compactMap { try $0.decode("found", as: String?.self) }
        )
    }

    /// `quote_search_walk_<column>`: the rank tiers read in order, each newest first; the texts and their tiers.
    private func walk(_ connection: PGConnection, _ query: String, column: String = "text") throws -> [String] {
        let p = QuoteSearch.Patterns(query)
        return try connection.query(
            """
            SELECT \(unsafeSQL: column) AS found, tier FROM search.quote_search_walk_\(unsafeSQL: column)(\
            \(p.contains), \(p.wholeWord), \(p.wordStart), \(p.query), NULL, 100)
            """
        ).map { "\(try $0.decode("tier", as: Int.self)) \(try $0.decode("found", as: String.self))" }
    }

    func testOneWordRanksWholeWordThenWordStartThenAnywhereNewestFirst() async throws {
        let connection = try await database()
        let love = ["I love the river", "Love conquers all.", "Lovely weather today", "A glove in the snow"]
        let fromWords = try words(connection, "love")
        XCTAssertEqual(fromWords.total, 4)
        XCTAssertEqual(fromWords.found, love)
        XCTAssertEqual(try ranked(connection, "LOVE").found, love, "every case of the query matches")
        XCTAssertEqual(try walk(connection, "love"), zip([0, 0, 1, 2], love).map { "\($0) \($1)" })
        let ada = ["Ada Byron", "Ada Lovelace", "Bob Adams", "Bob Adams"]
        XCTAssertEqual(try words(connection, "ada", column: "author").found, ada)
        XCTAssertEqual(try ranked(connection, "ada", column: "author").found, ada)
        XCTAssertEqual(try walk(connection, "ada", column: "author"), zip([0, 0, 1, 1], ada).map { "\($0) \($1)" })
    }

    func testTwoWordsAreFoundAdjacentThroughTheirRarePair() async throws {
        let connection = try await database()
        // Both words are also in "The fjord was quiet", apart and in the other order: no match.
        let fromWords = try words(connection, "quiet fjord")
        XCTAssertEqual(fromWords.total, 1)
        XCTAssertEqual(fromWords.found, ["Spring rain; quiet fjord"])
        XCTAssertEqual(try ranked(connection, "quiet fjord").found, ["Spring rain; quiet fjord"])
        XCTAssertEqual(try walk(connection, "quiet fjord"), ["0 Spring rain; quiet fjord"])
        XCTAssertEqual(try words(connection, "ann lee", column: "author").found, ["Ann Lee", "Ann Lee", "Ann Lee"])
    }

    func testAnAbsentWordHasNoMatches() async throws {
        let connection = try await database()
        let absent = try words(connection, "xylophone")
        XCTAssertEqual(absent.total, 0)
        XCTAssertEqual(absent.found, [])
        XCTAssertEqual(try ranked(connection, "xylophone").total, 0)
        XCTAssertEqual(try walk(connection, "xylophone"), [])
        XCTAssertEqual(try words(connection, "quiet xylophone").total, 0, "one absent word of two: none")
    }

    func testOneLetterAndEmptyQueriesAreLeftToTheFullRanking() async throws {
        let connection = try await database()
        // One letter: its "anywhere" tier would read the whole trigram index, so the index of words does not tell.
        XCTAssertNil(try words(connection, "w").total)
        let w = try ranked(connection, "w")
        XCTAssertEqual(w.total, 5)
        XCTAssertEqual(
            w.found,
            [
                "wellxbeing, 50 percent", "50% off: well_being", "The fjord was quiet", "Lovely weather today",
                "A glove in the snow",
            ])
        // The empty query (refused over HTTP) matches every quote; the index of words does not tell either.
        XCTAssertNil(try words(connection, "").total)
        XCTAssertEqual(try ranked(connection, "").total, Self.quotes.count)
    }

    func testPunctuationAndWildcardsMatchThemselves() async throws {
        let connection = try await database()
        XCTAssertEqual(try words(connection, "well_being").found, ["50% off: well_being"], "_ is no wildcard")
        XCTAssertEqual(try ranked(connection, "50% off").found, ["50% off: well_being"], "% is no wildcard")
        XCTAssertEqual(try ranked(connection, "all.").found, ["Love conquers all."])
        XCTAssertEqual(try ranked(connection, "rain;").found, ["Spring rain; quiet fjord"])
        XCTAssertEqual(try ranked(connection, "\\").total, 0)
    }

    func testAccentedLettersMatchInEveryCaseButNotTheirPlainForms() async throws {
        let connection = try await database()
        for query in ["café", "CAFÉ", "élan", "naïve"] {
            XCTAssertEqual(try ranked(connection, query).found, ["Café au lait, naïve élan"], query)
            XCTAssertEqual(try words(connection, query).found, ["Café au lait, naïve élan"], query)
        }
        for query in ["cafe", "elan", "naive"] {
            XCTAssertEqual(try ranked(connection, query).total, 0, query)
        }
    }
}
