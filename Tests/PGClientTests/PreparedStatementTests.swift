import Foundation
@testable import PGClient
import TestSupport
import XCTest

/// Pipelined statements run as named prepared statements of their connection: prepared once, answered right with
/// every parameter value, a failing prepare failing only its own statement, bounded in number, and healed when the
/// database forgets them.
final class PreparedStatementTests: XCTestCase {
    private func run(_ queries: [PGQuery], mode: PGConnection.PipelineMode, on connection: PGConnection)
        -> [Result<PGRows, PGError>]
    {
        var answers = [Result<PGRows, PGError>?](repeating: nil, count: queries.count)
        connection.runPipelined(queries, mode: mode) { index, result in answers[index] = result }
        return answers.map { $0 ?? .failure(PGError(kind: .server, message: "no answer")) }
    }

    private func values(_ answers: [Result<PGRows, PGError>]) -> [Int?] {
        answers.map { try? $0.get().first?.decode("v", as: Int.self) }
    }

    /// The session's prepared statements whose text contains `marker`, as PostgreSQL lists them.
    private func prepared(_ marker: String, on connection: PGConnection) throws -> Int {
        try connection.query(
            """
            SELECT count(*)::int8 AS n FROM pg_prepared_statements WHERE statement LIKE '%' || \(marker) || '%'
            """
        ).first!.decode("n", as: Int.self)
    }

    func testEachStatementIsPreparedOnceAndAnswersEveryValue() throws {
        for mode in [PGConnection.PipelineMode.separateTransactions, .sharedReadOnlyTransaction()] {
            let connection = try makeConnection()
            for round in 0..<3 {
                let queries: [PGQuery] =
                    (0..<4).map { "SELECT \(round * 10 + $0)::int8 + 1 AS v /* once */" }
                    + [PGQuery("SELECT \(round)::int8 * 2 AS v /* twice */")]
                let expected: [Int?] = (0..<4).map { round * 10 + $0 + 1 } + [round * 2]
                XCTAssertEqual(values(run(queries, mode: mode, on: connection)), expected, "\(mode), round \(round)")
            }
            XCTAssertEqual(try prepared("/* once */", on: connection), 1, "\(mode)")
            XCTAssertEqual(try prepared("/* twice */", on: connection), 1, "\(mode)")
            XCTAssertEqual(connection.transactionState, .idle)
        }
    }

    func testAStatementRunAloneIsPreparedOnceAndFailsAlone() throws {
        let connection = try makeConnection()
        for value in 1...3 {
            let rows = try connection.queryPrepared("SELECT \(value)::int8 * 3 AS v /* alone */")
            XCTAssertEqual(try single(rows).decode("v", as: Int.self), value * 3)
        }
        XCTAssertEqual(try prepared("/* alone */", on: connection), 1)
        XCTAssertThrowsError(try connection.queryPrepared("SELECT 1 / \(0) AS v /* alone */")) { error in
            XCTAssertEqual((error as? PGError)?.sqlState, "22012")  // division_by_zero
        }
        XCTAssertEqual(connection.transactionState, .idle)
        XCTAssertFalse(connection.isBroken)
        let after = try connection.queryPrepared("SELECT \(4)::int8 * 3 AS v /* alone */")
        XCTAssertEqual(try single(after).decode("v", as: Int.self), 12, "the connection serves the next statement")
    }

    func testTheSameTextWithOtherParameterTypesIsAnotherStatement() throws {
        let connection = try makeConnection()
        let answers = run(
            ["SELECT \(7)::text::int8 AS v /* typed */", "SELECT \("8")::text::int8 AS v /* typed */"],
            mode: .separateTransactions, on: connection)
        XCTAssertEqual(values(answers), [7, 8])
        _ = run(["SELECT \(9)::text::int8 AS v /* typed */"], mode: .separateTransactions, on: connection)
        XCTAssertEqual(try prepared("/* typed */", on: connection), 2)
    }

    func testAStatementThatCannotBePreparedFailsAloneAndIsNotKept() throws {
        for mode in [PGConnection.PipelineMode.separateTransactions, .sharedReadOnlyTransaction()] {
            let connection = try makeConnection()
            for _ in 0..<2 {
                let answers = run(
                    [
                        "SELECT \(1)::int8 AS v", "SELECT no_such_column + \(2) AS v /* bad */",
                        "SELECT \(3)::int8 AS v",
                    ], mode: mode, on: connection)
                XCTAssertEqual(values(answers), [1, nil, 3], "\(mode)")
                guard case .failure(let error) = answers[1] else { return XCTFail("expected a failure (\(mode))") }
                XCTAssertEqual(error.sqlState, .undefinedColumn, "\(mode): the prepare's own error, every time")
            }
            XCTAssertEqual(try prepared("/* bad */", on: connection), 0)
            XCTAssertEqual(connection.transactionState, .idle)
            XCTAssertFalse(connection.isBroken)
        }
    }

    func testAPrepareSkippedAfterAFailureIsSentAgain() throws {
        let connection = try makeConnection()
        let answers = run(
            ["SELECT 1 / \(0) AS v", "SELECT \(5)::int8 + 100 AS v /* later */"],
            mode: .sharedReadOnlyTransaction(), on: connection)
        XCTAssertEqual(values(answers), [nil, 105])
        XCTAssertEqual(try prepared("/* later */", on: connection), 1)
        XCTAssertEqual(
            values(
                run(
                    ["SELECT \(6)::int8 + 100 AS v /* later */"], mode: .separateTransactions,
                    on: connection)), [106])
    }

    func testTheNumberOfStatementsPerConnectionIsBounded() throws {
        let connection = try makeConnection()
        let count = PreparedStatements.defaultCapacity + 20
        for number in 0..<count {
            let answers = run(
                ["SELECT \(number)::int8 AS v /* bounded \(unsafeSQL: String(number)) */"],
                mode: .separateTransactions, on: connection)
            XCTAssertEqual(values(answers), [number])
        }
        XCTAssertEqual(try prepared("/* bounded ", on: connection), PreparedStatements.defaultCapacity)
    }

    func testStatementsTheDatabaseForgotArePreparedAgain() throws {
        let connection = try makeConnection()
        XCTAssertEqual(
            values(
                run(
                    ["SELECT \(1)::int8 AS v /* forgotten */"], mode: .separateTransactions,
                    on: connection)), [1])
        try connection.execute(unsafeSQL: "DEALLOCATE ALL")
        // The run that finds its statement gone fails with the database's own error; the next prepares it anew.
        let failed = run(["SELECT \(2)::int8 AS v /* forgotten */"], mode: .separateTransactions, on: connection)
        guard case .failure(let error) = failed[0] else { return XCTFail("expected 26000, got \(failed[0])") }
        XCTAssertEqual(error.sqlState, "26000")
        XCTAssertEqual(
            values(
                run(
                    ["SELECT \(3)::int8 AS v /* forgotten */"], mode: .separateTransactions,
                    on: connection)), [3])
        XCTAssertEqual(try prepared("/* forgotten */", on: connection), 1)
    }

    func testSharedReadsKeepOneGenericPlanOnlyWhenAskedAndLeaveTheSessionsSettingAlone() throws {
        let connection = try makeConnection()
        try connection.execute(
            unsafeSQL: "CREATE TABLE items (id int PRIMARY KEY); INSERT INTO items SELECT generate_series(1, 100)")
        for genericPlans in [true, false] {
            let marker = genericPlans ? "/* generic */" : "/* automatic */"
            for limit in 1...3 {
                let answers = run(
                    ["SELECT id AS v FROM items ORDER BY id LIMIT \(limit) \(unsafeSQL: marker)"],
                    mode: .sharedReadOnlyTransaction(plan: genericPlans ? .generic : .automatic), on: connection)
                XCTAssertEqual(try answers[0].get().count, limit)
            }
            let plans = try XCTUnwrap(
                connection.query(
                    """
                    SELECT generic_plans, custom_plans FROM pg_prepared_statements \
                    WHERE statement LIKE '%' || \(marker) || '%'
                    """
                ).first)
            // PostgreSQL's default plans `LIMIT $1` anew for each of the three runs.
            XCTAssertEqual(try plans.decode("generic_plans", as: Int.self), genericPlans ? 3 : 0, marker)
            XCTAssertEqual(try plans.decode("custom_plans", as: Int.self), genericPlans ? 0 : 3, marker)
        }
        let setting = try connection.query("SHOW plan_cache_mode").first?.decode("plan_cache_mode", as: String.self)
        XCTAssertEqual(setting, "auto", "the setting is the transaction's only")
    }
}
