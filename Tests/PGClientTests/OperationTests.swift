import Foundation
import Logging
import PGClient
import TestSupport
import XCTest

/// PGOperation: one operation, the same answer alone on the pool and inside a caller's transaction.
final class OperationTests: XCTestCase {
    private struct Refused: Error {}

    /// Inserts `name`: true when new; a refused row is translated into the caller's own error.
    private static func add(_ name: String) -> PGOperation<Bool> {
        .statement("INSERT INTO names (name) VALUES (\(name)) ON CONFLICT DO NOTHING") { run in
            do { return try run().affectedRows == 1 } catch let error as PGError
                where error.sqlState == .checkViolation
            { throw Refused() }
        }
    }

    private static let count = PGOperation<Int>.connection { connection in
        try connection.query("SELECT count(*)::int8 AS n FROM names")[0].decode("n", as: Int.self)
    }

    func testAloneAndInsideATransactionAnswerAlike() async throws {
        var logger = Logger(label: "OperationTests")
        logger.logLevel = .error
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 2, logger: logger)
        defer { pool.shutdown() }
        try await pool.query("CREATE TABLE names (name text PRIMARY KEY CHECK (name <> 'bad'))")

        let alone = try await pool.run(Self.add("a"))
        let again = try await pool.run(Self.add("a"))
        XCTAssertEqual([alone, again], [true, false])
        do {
            _ = try await pool.run(Self.add("bad"))
            XCTFail("a refused row must throw")
        } catch is Refused {}

        // Inside a transaction that then fails, the same operation's work is rolled back with it.
        do {
            try await pool.withTransaction { connection in
                XCTAssertTrue(try connection.run(Self.add("b")))
                XCTAssertFalse(try connection.run(Self.add("a")))
                XCTAssertEqual(try connection.run(Self.count), 2)
                _ = try connection.run(Self.add("bad"))
            }
            XCTFail("the transaction must fail")
        } catch is Refused {}
        let kept = try await pool.run(Self.count)
        XCTAssertEqual(kept, 1)
    }
}
