import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// Migration 0045: the functions every quote written evaluates (its words, its time buckets, its vocabulary entries)
/// are inlined by PostgreSQL and give 0013's results.
final class InlinedWordFunctionsTests: XCTestCase {
    func testWordsAndBucketsEqual0013sDefinitionsAndAreInlined() async throws {
        let app = try await TestApp.start()
        try await app.withConnection { connection in
            for text in ["Élan d'ÉTÉ — naïve_test 42!", "  the  the ", "", "---", "x"] {
                let row = try connection.query(
                    """
                    SELECT quote_words_array(\(text))
                        = array_remove(regexp_split_to_array(lower(\(text)), '\\W+'), '') AS same
                    """)[0]
                XCTAssertEqual(try row.decode("same", as: Bool.self), true, text)
            }
            for time in ["1969-07-20 20:17:40+00", "2014-01-01 00:00:00+00", "2026-11-25 20:30:00.123456+00"] {
                let row = try connection.query(
                    """
                    SELECT quote_time_buckets(\(time)::timestamptz) = (
                        SELECT array_agg(quote_time_bucket(quote_time_us(\(time)::timestamptz), l) ORDER BY l)
                        FROM generate_series(0, 5) AS l) AS same
                    """)[0]
                XCTAssertEqual(try row.decode("same", as: Bool.self), true, time)
            }
            let nulls = try connection.query(
                "SELECT quote_words_array(NULL) IS NULL AS words, quote_time_buckets(NULL) IS NULL AS buckets")[0]
            XCTAssertEqual(try nulls.decode("words", as: Bool.self), true)
            XCTAssertEqual(try nulls.decode("buckets", as: Bool.self), true)
            // Inlined: the plan computes the built-in functions, with no call of the SQL functions left.
            let plan = try connection.query(
                "EXPLAIN (VERBOSE) SELECT quote_words_array(text), quote_time_buckets(created_at) FROM quotes"
            ).map { try $0.decode("QUERY PLAN", as: String.self) }.joined(separator: "\n")
            XCTAssertTrue(plan.contains("array_remove(regexp_split_to_array"), plan)
            XCTAssertFalse(plan.contains("quote_words_array") || plan.contains("quote_time_buckets"), plan)
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
                            CREATE OR REPLACE FUNCTION quote_words_array(t text) RETURNS text[]
                                LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
                                AS $$ SELECT array_remove(regexp_split_to_array(lower(t), '\\W+'), '')  $$
                            """)
                    try connection.execute(unsafeSQL: migration.sql)
                    let body = try connection.query(
                        "SELECT prosrc FROM pg_proc WHERE oid = 'quote_words_array(text)'::regprocedure")[0]
                        .decode("prosrc", as: String.self)
                    XCTAssertTrue(body.hasSuffix("'')  "), "the other definition stays: \(body)")
                    throw RollBack()
                }
            } catch is RollBack {}
        }
        await app.stop()
    }
}
