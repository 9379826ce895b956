import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// Migration 0045: the vocabulary's triggers list a statement's words in one query, with 0013's results; a
/// definition changed since 0013 is left alone.
final class VocabularyEntriesTests: XCTestCase {
    func testEntriesEqual0013sDefinition() async throws {
        let app = try await TestApp.start()
        try await app.withConnection { connection in
            let texts = ["Élan d'ÉTÉ — naïve_test 42! été", "  the  the THE ", "", "---", "x y x"]
            let authors = ["Ada Ada", "Lao Tzu", "O'Brien"]
            let row = try connection.query(
                """
                SELECT (SELECT array_agg(e ORDER BY e)
                        FROM unnest(quote_vocabulary_entries(\(texts)::text[], \(authors)::text[])) AS e)
                     = (SELECT array_agg(e ORDER BY e) FROM (
                           SELECT 't:' || w AS e FROM unnest(\(texts)::text[]) AS t, quote_words_of(t) AS w
                           UNION ALL SELECT 'a:' || w FROM unnest(\(authors)::text[]) AS a, quote_words_of(a) AS w
                       ) AS before) AS same,
                       quote_vocabulary_entries('{}', '{}') = '{}' AS empty
                """)[0]
            XCTAssertEqual(try row.decode("same", as: Bool.self), true)
            XCTAssertEqual(try row.decode("empty", as: Bool.self), true)
        }
        await app.stop()
    }

    func testTheVocabularyCountsEachQuoteOncePerWord() async throws {
        let app = try await TestApp.start()
        func uses(_ field: String, _ word: String) async throws -> Int? {
            try await app.withConnection { connection in
                try connection.query(
                    "SELECT uses::int8 AS n FROM quote_vocabulary WHERE field = \(field) AND word = \(word)"
                ).first.map { try $0.decode("n", as: Int.self) }
            }
        }
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category) VALUES
                    ('Love, love and LOVE.', 'Ada Ada', 'love'), ('love you', 'Ada Lovelace', 'love'),
                    ('Nothing here', 'Grace Hopper', 'wisdom')
                """)
        }
        let love2 = try await uses("t", "love")
        XCTAssertEqual(love2, 2, "three times in one quote counts once")
        let ada2 = try await uses("a", "ada")
        XCTAssertEqual(ada2, 2)
        let here1 = try await uses("t", "here")
        XCTAssertEqual(here1, 1)
        try await app.withConnection { connection in
            _ = try connection.query("DELETE FROM quotes WHERE author = 'Ada Ada' OR author = 'Grace Hopper'")
        }
        let love1 = try await uses("t", "love")
        XCTAssertEqual(love1, 1)
        let ada1 = try await uses("a", "ada")
        XCTAssertEqual(ada1, 1)
        let hereAfter = try await uses("t", "here")
        XCTAssertNil(hereAfter, "a word no quote uses is forgotten")
        await app.stop()
    }

    func testADefinitionChangedAfter0013IsNotOverwritten() async throws {
        let app = try await TestApp.start()
        let migration = try Migration.load(from: TestApp.repositoryRoot.appendingPathComponent("migrations"))
            .first { $0.version == "0045" }!
        struct RollBack: Error {}
        try await app.withConnection { connection in
            do {
                try connection.transaction { connection in
                    try connection.execute(
                        unsafeSQL: """
                            CREATE OR REPLACE FUNCTION quote_vocabulary_entries(texts text[], authors text[])
                                RETURNS text[] LANGUAGE sql IMMUTABLE AS $$ SELECT '{}'::text[] $$
                            """)
                    try connection.execute(unsafeSQL: migration.sql)
                    let body = try connection.query(
                        "SELECT prosrc FROM pg_proc WHERE proname = 'quote_vocabulary_entries'"
                    )[0].decode("prosrc", as: String.self)
                    XCTAssertEqual(body, " SELECT '{}'::text[] ", "the other definition stays")
                    throw RollBack()
                }
            } catch is RollBack {}
        }
        await app.stop()
    }
}
