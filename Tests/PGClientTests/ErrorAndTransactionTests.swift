import Foundation
import PGClient
import TestSupport
import XCTest

/// Server errors, transactions and multi-statement execution.
final class ErrorAndTransactionTests: XCTestCase {
    private var connection: PGConnection!

    override func setUpWithError() throws {
        connection = try makeConnection()
        try connection.execute(
            unsafeSQL: """
                CREATE TABLE users (
                    id serial PRIMARY KEY,
                    email text NOT NULL CONSTRAINT users_email_key UNIQUE,
                    age integer CONSTRAINT users_age_check CHECK (age >= 0)
                );
                CREATE TABLE posts (id serial PRIMARY KEY, user_id integer NOT NULL REFERENCES users (id));
                """)
    }

    override func tearDown() {
        connection = nil
    }

    private func count(_ email: String) throws -> Int {
        try single(connection.query("SELECT count(*) AS n FROM users WHERE email = \(email)")).decode("n")
    }

    func testUniqueViolationCarriesSQLStateAndConstraint() throws {
        try connection.query("INSERT INTO users (email) VALUES (\("a@example.com"))")
        let error = assertPGError { try connection.query("INSERT INTO users (email) VALUES (\("a@example.com"))") }
        XCTAssertEqual(error?.kind, .server)
        XCTAssertEqual(error?.sqlState, .uniqueViolation)
        XCTAssertEqual(error?.sqlState?.rawValue, "23505")
        XCTAssertEqual(error?.constraint, "users_email_key")
        XCTAssertEqual(error?.table, "users")
        XCTAssertTrue(error?.detail?.contains("a@example.com") ?? false)
        XCTAssertFalse(error?.description.contains("a@example.com") ?? true, "row data must not reach logs")
        XCTAssertTrue(error?.debugDescription.contains("a@example.com") ?? false)
        XCTAssertTrue(error?.query?.contains("****") ?? false)
        XCTAssertFalse(error?.isConnectionFailure ?? true)
        // The connection stays usable after a statement error.
        XCTAssertEqual(try count("a@example.com"), 1)
    }

    func testOtherIntegrityErrors() throws {
        XCTAssertEqual(
            assertPGError { try connection.query("INSERT INTO users (email, age) VALUES ('b', \(-1))") }?.sqlState,
            .checkViolation)
        XCTAssertEqual(
            assertPGError { try connection.query("INSERT INTO users (email) VALUES (\(String?.none))") }?.sqlState,
            .notNullViolation)
        let foreignKey = assertPGError { try connection.query("INSERT INTO posts (user_id) VALUES (\(999))") }
        XCTAssertEqual(foreignKey?.sqlState, .foreignKeyViolation)
        XCTAssertEqual(foreignKey?.constraint, "posts_user_id_fkey")
        XCTAssertEqual(assertPGError { try connection.query("SELECT * FROM nowhere") }?.sqlState, .undefinedTable)
        XCTAssertEqual(assertPGError { try connection.query("SELEC 1") }?.sqlState, .syntaxError)
    }

    func testTransactionCommitsOnSuccess() throws {
        let id = try connection.transaction { connection in
            try single(connection.query("INSERT INTO users (email) VALUES ('kept') RETURNING id")).decode(
                "id", as: Int.self)
        }
        XCTAssertGreaterThan(id, 0)
        XCTAssertEqual(try count("kept"), 1)
    }

    func testTransactionRollsBackOnThrow() throws {
        struct Abort: Error {}
        XCTAssertThrowsError(
            try connection.transaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('discarded')")
                throw Abort()
            }
        ) { error in
            XCTAssertTrue(error is Abort, "the body's own error is rethrown unchanged")
        }
        XCTAssertEqual(try count("discarded"), 0)

        // A failing statement inside rolls back the earlier ones.
        let error = assertPGError {
            try connection.transaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('first')")
                try connection.query("INSERT INTO users (email) VALUES ('first')")
            }
        }
        XCTAssertEqual(error?.sqlState, .uniqueViolation)
        XCTAssertEqual(try count("first"), 0)
    }

    func testCommitThenThrow() throws {
        struct Unauthorized: Error {}
        XCTAssertThrowsError(
            try connection.transaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('revoked')")
                throw PGCommitThenThrow(Unauthorized())
            }
        ) { error in
            XCTAssertTrue(error is Unauthorized)
        }
        XCTAssertEqual(try count("revoked"), 1)
    }

    func testSwallowedErrorDoesNotSilentlyCommit() throws {
        let error = assertPGError {
            try connection.transaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('lost')")
                _ = try? connection.query("SELECT * FROM nowhere")
            }
        }
        XCTAssertEqual(error?.kind, .transactionAborted)
        XCTAssertEqual(try count("lost"), 0)
        XCTAssertEqual(try count("lost"), 0, "the connection is usable afterwards")
    }

    func testNestedTransactionUsesSavepoint() throws {
        struct Abort: Error {}
        try connection.transaction { connection in
            try connection.query("INSERT INTO users (email) VALUES ('outer')")
            _ = try? connection.transaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('inner')")
                throw Abort()
            }
            try connection.transaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('inner-kept')")
            }
        }
        XCTAssertEqual(try count("outer"), 1)
        XCTAssertEqual(try count("inner"), 0)
        XCTAssertEqual(try count("inner-kept"), 1)
    }

    func testExecuteRunsMultipleStatements() throws {
        try connection.execute(
            unsafeSQL: """
                CREATE TABLE numbers (n integer);
                INSERT INTO numbers VALUES (1), (2);
                -- a comment; with a semicolon
                INSERT INTO numbers VALUES (3);
                """)
        XCTAssertEqual(try single(connection.query("SELECT sum(n) AS s FROM numbers")).decode("s", as: Int.self), 6)

        // Without its own BEGIN/COMMIT the batch is all-or-nothing.
        XCTAssertNotNil(
            assertPGError {
                try connection.execute(unsafeSQL: "INSERT INTO numbers VALUES (4); INSERT INTO numbers VALUES ('x')")
            })
        XCTAssertEqual(try single(connection.query("SELECT count(*) AS c FROM numbers")).decode("c", as: Int.self), 3)
    }

    func testAffectedRowsAndColumns() throws {
        let insert = try connection.query("INSERT INTO users (email) VALUES ('x1'), ('x2'), ('x3')")
        XCTAssertEqual(insert.affectedRows, 3)
        XCTAssertEqual(insert.commandTag, "INSERT 0 3")
        let update = try connection.query("UPDATE users SET age = \(30) WHERE email LIKE \("x%")")
        XCTAssertEqual(update.affectedRows, 3)
        let select = try connection.query("SELECT id, email FROM users ORDER BY id")
        XCTAssertEqual(select.columns, ["id", "email"])
        XCTAssertEqual(try select.map { try $0.decode("email", as: String.self) }, ["x1", "x2", "x3"])
        XCTAssertEqual(select.affectedRows, 3)
    }

    func testConnectFailureIsAConnectionError() throws {
        // Port 1 on loopback: refused at once.
        let error = assertPGError { _ = try PGConnection(connectionString: "postgresql://nobody@127.0.0.1:1/none") }
        XCTAssertEqual(error?.kind, .connection)
        XCTAssertTrue(error?.isConnectionFailure ?? false)
        // Keyword strings work as well as URIs.
        XCTAssertEqual(
            assertPGError { _ = try PGConnection(connectionString: "host=127.0.0.1 port=1 user=nobody") }?.kind,
            .connection)
    }
}
