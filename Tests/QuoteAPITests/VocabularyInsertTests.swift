import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// Migration 0051: the vocabulary's insert trigger counts a statement's words in one INSERT, with the counts of
/// 0013's definition; a definition changed since 0013 is left alone.
final class VocabularyInsertTests: XCTestCase {
    func testAStatementsWordsAreCountedAsEachQuoteOfTheTableHoldsThem() async throws {
        let app = try await TestApp.start()
        let texts = [
            "Élan d'ÉTÉ — naïve_test 42! été", "  the  the THE ", "---", "x y x", "love, LOVE and love", "Été 42",
        ]
        let authors = ["Ada Ada", "Lao Tzu", "O'Brien", "ada", "Zoë", "lao-tzu"]
        try await app.withConnection { connection in
            // Two statements: the second adds to words the first put in the vocabulary.
            for range in [0..<3, 3..<6] {
                _ = try connection.query(
                    """
                    INSERT INTO quotes (text, author, category)
                    SELECT t, a, 'love' FROM unnest(\(Array(texts[range]))::text[], \(Array(authors[range]))::text[])
                        AS x (t, a)
                    """)
            }
            let row = try connection.query(
                """
                SELECT (SELECT array_agg(e ORDER BY e) FROM (
                            SELECT v.field::text || ':' || v.word || '=' || v.uses AS e FROM quote_vocabulary v
                        ) AS vocabulary) AS kept,
                       (SELECT array_agg(e ORDER BY e) FROM (
                            SELECT 't:' || w || '=' || count(*) AS e FROM quotes, quote_words_of(text) AS w GROUP BY w
                            UNION ALL
                            SELECT 'a:' || w || '=' || count(*) FROM quotes, quote_words_of(author) AS w GROUP BY w
                        ) AS counted) AS counted
                """)[0]
            let kept = try row.decode("kept", as: [String].self)
            XCTAssertEqual(kept, try row.decode("counted", as: [String].self))
            XCTAssertTrue(kept.contains("t:été=2"), "\(kept)")
            XCTAssertTrue(kept.contains("t:love=1"), "three times in one quote counts once")
            XCTAssertTrue(kept.contains("a:ada=2"))
        }
        await app.stop()
    }

    func testADefinitionChangedAfter0013IsNotOverwritten() async throws {
        try await VocabularyEntriesTests.assertMigration(
            "0051", keeps: "quote_vocabulary_on_insert",
            changedTo: """
                CREATE OR REPLACE FUNCTION quote_vocabulary_on_insert() RETURNS trigger
                    LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$
                """,
            body: " BEGIN RETURN NULL; END ")
    }
}
