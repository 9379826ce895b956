import Foundation
import Logging
@testable import PGClient
import TestSupport
import XCTest

/// Pipelined statements: answers in order, each statement's own fate, the shared read-only transaction,
/// a connection lost mid-pipeline, and the pool gathering concurrent statements into pipelines.
final class PipelineTests: XCTestCase {
    private func run(
        _ queries: [PGQuery], mode: PGConnection.PipelineMode, on connection: PGConnection
    ) -> [Result<PGRows, PGError>] {
        var answers: [Int: Result<PGRows, PGError>] = [:]
        var order: [Int] = []
        connection.runPipelined(queries, mode: mode) { index, result in
            XCTAssertNil(answers[index], "statement \(index) answered twice")
            answers[index] = result
            order.append(index)
        }
        XCTAssertEqual(order, Array(queries.indices), "answers must come once each, in order")
        return queries.indices.map { answers[$0] ?? .failure(PGError(kind: .server, message: "no answer")) }
    }

    private func value(_ result: Result<PGRows, PGError>, file: StaticString = #filePath, line: UInt = #line) -> Int? {
        guard case .success(let rows) = result else {
            XCTFail("expected rows, got \(result)", file: file, line: line)
            return nil
        }
        return try? rows.first?.decode("v", as: Int.self)
    }

    private func sqlState(_ result: Result<PGRows, PGError>) -> String? {
        guard case .failure(let error) = result else { return nil }
        return error.sqlState?.rawValue
    }

    func testSeparateTransactionsKeepEachStatementsFate() throws {
        let connection = try makeConnection()
        try connection.execute(unsafeSQL: "CREATE TABLE items (id int PRIMARY KEY)")
        let answers = run(
            [
                "SELECT \(1) AS v",
                "INSERT INTO items VALUES (\(1))",
                "SELECT 1 / \(0) AS v",
                "INSERT INTO items VALUES (\(1))",  // duplicate: fails alone
                "INSERT INTO items VALUES (\(2))",
                "SELECT \(4) AS v",
            ], mode: .separateTransactions, on: connection)

        XCTAssertEqual(value(answers[0]), 1)
        XCTAssertEqual(try answers[1].get().affectedRows, 1)
        XCTAssertEqual(sqlState(answers[2]), "22012")
        XCTAssertEqual(sqlState(answers[3]), PGError.SQLState.uniqueViolation.rawValue)
        XCTAssertEqual(try answers[4].get().affectedRows, 1)
        XCTAssertEqual(value(answers[5]), 4)
        // Neither failure rolled back the inserts around it.
        let ids = try connection.query("SELECT id FROM items ORDER BY id").map { try $0.decode("id", as: Int.self) }
        XCTAssertEqual(ids, [1, 2])
        XCTAssertEqual(connection.transactionState, .idle)
        XCTAssertFalse(connection.isBroken)
    }

    func testSharedReadOnlyTransactionRunsSkippedStatementsAgain() throws {
        let connection = try makeConnection()
        let answers = run(
            [
                "SELECT \(1) AS v", "SELECT 1 / \(0) AS v", "SELECT \(3) AS v", "SELECT 1 / \(0) AS v",
                "SELECT \(5) AS v",
            ], mode: .sharedReadOnlyTransaction(), on: connection)

        XCTAssertEqual(value(answers[0]), 1)
        XCTAssertEqual(sqlState(answers[1]), "22012")
        XCTAssertEqual(value(answers[2]), 3)
        XCTAssertEqual(sqlState(answers[3]), "22012")
        XCTAssertEqual(value(answers[4]), 5)
        XCTAssertEqual(connection.transactionState, .idle)
        XCTAssertEqual(value(.success(try connection.query("SELECT \(6) AS v"))), 6)
    }

    func testSharedReadOnlyTransactionRefusesWrites() throws {
        let connection = try makeConnection()
        try connection.execute(unsafeSQL: "CREATE TABLE items (id int PRIMARY KEY)")
        let answers = run(
            [
                "SELECT \(1) AS v", "INSERT INTO items VALUES (\(1))", "SELECT \(3) AS v",
            ], mode: .sharedReadOnlyTransaction(), on: connection)

        XCTAssertEqual(value(answers[0]), 1)
        XCTAssertEqual(sqlState(answers[1]), "25006")  // read_only_sql_transaction
        XCTAssertEqual(value(answers[2]), 3)
        XCTAssertEqual(
            try connection.query("SELECT count(*)::int8 AS v FROM items").first?.decode("v", as: Int.self), 0)
        XCTAssertEqual(connection.transactionState, .idle)
    }

    func testStatementsLibpqWouldMisreadAreRefusedWithoutStoppingTheOthers() throws {
        for mode in [PGConnection.PipelineMode.separateTransactions, .sharedReadOnlyTransaction()] {
            let connection = try makeConnection()
            let answers = run(
                [
                    "SELECT \(1) AS v", "SELECT length(\("a\u{0}b")) AS v", "SELECT \(3) AS v",
                ], mode: mode, on: connection)
            XCTAssertEqual(value(answers[0]), 1, "\(mode)")
            guard case .failure(let error) = answers[1] else { return XCTFail("a NUL must be refused (\(mode))") }
            XCTAssertEqual(error.kind, .invalidQuery)
            XCTAssertEqual(value(answers[2]), 3, "\(mode)")
            XCTAssertEqual(connection.transactionState, .idle)
        }
    }

    func testLostConnectionFailsEveryUnansweredStatement() throws {
        let url = try TestDatabase.makeDatabase()
        let connection = try PGConnection(connectionString: url)
        let pid = try XCTUnwrap(connection.query("SELECT pg_backend_pid() AS v").first?.decode("v", as: Int.self))
        // Terminate the backend while it sleeps inside the pipeline's first statement.
        let terminated = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.3)
            _ = try? PGConnection(connectionString: url).query("SELECT pg_terminate_backend(\(pid)::int)")
            terminated.signal()
        }
        let answers = run(
            [
                "SELECT pg_sleep(\(5.0)) IS NULL AS v", "SELECT \(2) AS v", "SELECT \(3) AS v",
            ], mode: .sharedReadOnlyTransaction(), on: connection)
        terminated.wait()
        for (index, answer) in answers.enumerated() {
            guard case .failure(let error) = answer else { return XCTFail("expected a failure, got \(answer)") }
            if index == 0, error.sqlState == .adminShutdown { continue }  // the server's own goodbye
            XCTAssertEqual(error.kind, .connection, "statement \(index)")
        }
        XCTAssertTrue(connection.isBroken)
    }

    func testConnectionLostInTheLastSeparateStatementFailsItOnce() throws {
        let url = try TestDatabase.makeDatabase()
        let connection = try PGConnection(connectionString: url)
        let pid = try XCTUnwrap(connection.query("SELECT pg_backend_pid() AS v").first?.decode("v", as: Int.self))
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.3)
            _ = try? PGConnection(connectionString: url).query("SELECT pg_terminate_backend(\(pid)::int)")
        }
        // The server's goodbye answers the sleeping statement, then its sync point never comes: one answer each.
        let answers = run(
            ["SELECT \(1) AS v", "SELECT pg_sleep(\(5.0)) IS NULL AS v"],
            mode: .separateTransactions, on: connection)
        XCTAssertEqual(value(answers[0]), 1)
        guard case .failure(let error) = answers[1] else { return XCTFail("expected a failure, got \(answers[1])") }
        XCTAssertTrue(error.kind == .connection || error.sqlState == .adminShutdown, "\(error)")
        XCTAssertTrue(connection.isBroken)
    }

    func testPoolGathersConcurrentStatementsIntoPipelines() async throws {
        var logger = Logger(label: "PipelineTests")
        logger.logLevel = .error
        let url = try TestDatabase.makeDatabase()
        let pool = PGPool(connectionString: url, size: 2, logger: logger)
        defer { pool.shutdown() }
        try await pool.query("CREATE TABLE items (id int PRIMARY KEY)")

        // Reads, failing reads, inserts and duplicate inserts, all at once.
        enum Outcome: Equatable {
            case value(Int)
            case inserted
            case failed(String)
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Outcome).self) { group in
            for index in 0..<400 {
                group.addTask {
                    do {
                        switch index % 4 {
                        case 0:
                            return (index, .value(try await pool.read("SELECT \(index) * 2 AS v").first!.decode("v")))
                        case 1:
                            let rows = try await pool.read("SELECT 1 / (\(index) % 3) AS v, pg_backend_pid() AS pid")
                            return (index, .value(try rows.first!.decode("v")))
                        case 2:
                            try await pool.query("INSERT INTO items VALUES (\(index))")
                            return (index, .inserted)
                        default:
                            // Every other one collides with the row inserted by index - 1.
                            let id = index % 8 == 3 ? index - 1 : index
                            try await pool.query("INSERT INTO items VALUES (\(id))")
                            return (index, .inserted)
                        }
                    } catch let error as PGError {
                        return (index, .failed(error.sqlState?.rawValue ?? "\(error.kind)"))
                    }
                }
            }
            var outcomes: [Int: Outcome] = [:]
            for try await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }

        var expectedIDs = Set<Int>()
        for index in 0..<400 {
            let outcome = outcomes[index]
            switch index % 4 {
            case 0:
                XCTAssertEqual(outcome, .value(index * 2))
            case 1:
                XCTAssertEqual(outcome, index % 3 == 0 ? .failed("22012") : .value(1 / (index % 3)))
            case 2 where index % 8 == 2:
                // index + 1 inserts the same id: exactly one of the two wins, the other fails alone.
                let pair = [outcome, outcomes[index + 1]]
                XCTAssertEqual(pair.filter { $0 == .inserted }.count, 1, "\(index): \(pair)")
                XCTAssertEqual(pair.filter { $0 == .failed("23505") }.count, 1, "\(index): \(pair)")
                expectedIDs.insert(index)
            case 2:
                XCTAssertEqual(outcome, .inserted)
                expectedIDs.insert(index)
            default:
                if index % 8 != 3 {
                    XCTAssertEqual(outcome, .inserted)
                    expectedIDs.insert(index)
                }
            }
        }
        let stored = Set(try await pool.read("SELECT id FROM items").map { try $0.decode("id", as: Int.self) })
        XCTAssertEqual(stored, expectedIDs, "every acknowledged insert is stored, and only those")
        let stats = pool.stats
        XCTAssertEqual(stats.inUse, 0)
        XCTAssertEqual(stats.waiting, 0)
        XCTAssertLessThanOrEqual(stats.open, 2)
    }
}
