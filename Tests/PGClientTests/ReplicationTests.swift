import Foundation
import Logging
import PGClient
import TestSupport
import XCTest

/// What a pool does beyond one server: read replicas with fallback to the primary, multi-host connection strings,
/// writes refused by a read-only server, and unnamed statements.
final class ReplicationTests: XCTestCase {
    private var logger: Logger {
        var logger = Logger(label: "ReplicationTests")
        logger.logLevel = .critical
        return logger
    }

    /// The port of the server a read ran on.
    private static let whichServer: PGQuery = "SELECT current_setting('port')::int AS port"

    private func port(of url: String) throws -> Int { try XCTUnwrap(URLComponents(string: url)?.port) }

    /// `url` with its host:port replaced by `hosts` (a libpq multi-host list).
    private func url(_ url: String, hosts: String, query: String? = nil) throws -> String {
        let components = try XCTUnwrap(URLComponents(string: url))
        // The user and password as given (percent-encoded); the embedded cluster wants its generated password.
        let password = components.percentEncodedPassword.map { ":" + $0 } ?? ""
        let user = components.percentEncodedUser.map { $0 + password + "@" } ?? ""
        return "postgresql://\(user)\(hosts)\(components.path)" + (query.map { "?" + $0 } ?? "")
    }

    /// Polls `condition` every 100 ms for at most `seconds`.
    private func eventually(within seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    func testReadsGoToAHealthyReplicaAndFallBackToThePrimaryWhileItIsDownThenReturn() async throws {
        let primaryURL = try TestDatabase.makeDatabase()
        let replicaCluster = try TestDatabase.makeDedicatedCluster(label: "replica")
        let replicaURL = try replicaCluster.start()
        defer { try? replicaCluster.stop() }
        let primary = PGPool(connectionString: primaryURL, size: 2, logger: logger)
        defer { primary.shutdown() }
        let reads = PGPool(
            replicas: [replicaURL], primary: primary, size: 2, maxLag: .seconds(5),
            checkInterval: .milliseconds(200), logger: logger)
        defer { reads.shutdown() }
        let primaryPort = try port(of: primaryURL)
        let replicaPort = try port(of: replicaURL)
        func servedBy() async throws -> Int {
            try await reads.read(Self.whichServer).first!.decode("port", as: Int.self)
        }

        // Before the first check nothing is known: the primary answers.
        let becameHealthy = try await eventually(within: 10) { try await servedBy() == replicaPort }
        XCTAssertTrue(becameHealthy, "a reachable replica within the lag bound takes the reads")
        let viaSession = try await reads.withConnection {
            try $0.query(Self.whichServer).first!.decode("port", as: Int.self)
        }
        XCTAssertEqual(viaSession, replicaPort)

        try replicaCluster.stop()
        // Every read goes on: the first one after the stop falls back to the primary by itself.
        for _ in 0..<20 {
            let port = try await servedBy()
            XCTAssertEqual(port, primaryPort)
        }
        XCTAssertEqual(reads.replicaUse?.healthy, [false])

        _ = try replicaCluster.start()
        let returned = try await eventually(within: 15) { try await servedBy() == replicaPort }
        XCTAssertTrue(returned, "the replica comes back by itself")
        // The read URL leads to a server that is not in recovery: what it served counts as a primary's.
        let use = try XCTUnwrap(reads.replicaUse)
        XCTAssertEqual(use.standby, [false])
        XCTAssertEqual(use.replicaReads, 0)
        XCTAssertGreaterThanOrEqual(use.primaryReads, 22)
    }

    func testAReplicaOnADeadPortIsSkippedAndReadsStillWork() async throws {
        let primaryURL = try TestDatabase.makeDatabase()
        let primary = PGPool(connectionString: primaryURL, size: 2, logger: logger)
        defer { primary.shutdown() }
        // Port 1 on loopback: nothing listens, connections are refused at once.
        let dead = try url(primaryURL, hosts: "127.0.0.1:1")
        // The same database as a second "replica": a server not in recovery lags by nothing.
        let reads = PGPool(
            replicas: [dead, primaryURL], primary: primary, size: 1, maxLag: .zero,
            checkInterval: .milliseconds(100), logger: logger)
        defer { reads.shutdown() }
        for index in 0..<50 {
            let row = try await reads.read("SELECT \(index)::int AS n").first
            XCTAssertEqual(try row?.decode("n", as: Int.self), index)
        }
        let healthy = await eventually(within: 10) { reads.replicaUse?.healthy == [false, true] }
        XCTAssertTrue(
            healthy,
            "the dead replica is skipped, the live one (lag 0 against a bound of 0) is used: "
                + "\(String(describing: reads.replicaUse))"
        )
        for _ in 0..<10 { _ = try await reads.read("SELECT 1") }
        XCTAssertEqual(reads.replicaUse?.standby, [false, false], "neither URL leads to a server in recovery")
        XCTAssertEqual(reads.replicaUse?.replicaReads, 0, "reads are counted by what served them, not by the URL")
    }

    func testAWriteSentToTheReadPoolByMistakeLandsOnThePrimaryAndTheReplicaStaysInUse() async throws {
        let setup: (PGConnection) throws -> Void = { try $0.execute(unsafeSQL: "CREATE TABLE misrouted (n int)") }
        let primaryURL = try TestDatabase.makeDatabase(setup: setup)
        let replicaURL = try TestDatabase.makeDatabase(setup: setup)
        let replicaName = try XCTUnwrap(URLComponents(string: replicaURL)?.path.dropFirst())
        // Read-only like a standby.
        try PGConnection(connectionString: replicaURL)
            .execute(unsafeSQL: "ALTER DATABASE \(replicaName) SET default_transaction_read_only = on")
        let primary = PGPool(connectionString: primaryURL, size: 1, logger: logger)
        defer { primary.shutdown() }
        let reads = PGPool(
            replicas: [replicaURL], primary: primary, size: 1, maxLag: .seconds(5),
            checkInterval: .milliseconds(100), logger: logger)
        defer { reads.shutdown() }
        let inUse = await eventually(within: 10) { reads.replicaUse?.healthy == [true] }
        XCTAssertTrue(inUse)
        try await reads.query("INSERT INTO misrouted VALUES (1)")
        let stored = try await primary.read("SELECT count(*)::int AS c FROM misrouted")
        XCTAssertEqual(try stored.first?.decode("c", as: Int.self), 1, "written once, on the primary")
        XCTAssertEqual(reads.replicaUse?.healthy, [true], "a refused write says nothing about the replica's health")
    }

    func testMultiHostURLSkipsADeadFirstHostAndFindsTheReadWriteServer() async throws {
        let live = try TestDatabase.makeDatabase()
        let components = try XCTUnwrap(URLComponents(string: live))
        let hosts = "127.0.0.1:1,\(components.host ?? "127.0.0.1"):\(components.port ?? 5432)"
        let multiHost = try url(live, hosts: hosts, query: "target_session_attrs=read-write")
        let pool = PGPool(connectionString: multiHost, size: 1, logger: logger)
        defer { pool.shutdown() }
        try await pool.query("CREATE TABLE written (n int)")
        try await pool.query("INSERT INTO written VALUES (1)")
        let rows = try await pool.read("SELECT count(*)::int AS c FROM written")
        XCTAssertEqual(try rows.first?.decode("c", as: Int.self), 1)

        // No host at all that accepts: a connection failure (503 for the API), quickly.
        let none = PGPool(
            connectionString: try url(live, hosts: "127.0.0.1:1,127.0.0.1:2", query: "target_session_attrs=read-write"),
            size: 1, logger: logger)
        defer { none.shutdown() }
        let error = await assertPGErrorAsync { _ = try await none.query("SELECT 1") }
        XCTAssertEqual(error?.isConnectionFailure, true)
    }

    func testAWriteRefusedByAReadOnlySessionRunsAgainOnAFreshConnection() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 1, logger: logger)
        defer { pool.shutdown() }
        try await pool.query("CREATE TABLE acknowledged (n int)")
        // The pool's only connection turns read-only, like a primary demoted under it.
        let firstBackend = try await pool.withConnection { connection in
            try connection.query("SET default_transaction_read_only = on")
            return try connection.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self)
        }
        try await pool.query("INSERT INTO acknowledged VALUES (1)")  // pipelined statement
        try await pool.withConnection { connection in  // session
            try connection.query("SET default_transaction_read_only = on")
        }
        try await pool.withTransaction { try $0.query("INSERT INTO acknowledged VALUES (2)") }
        let rows = try await pool.read(
            "SELECT array_agg(n ORDER BY n)::text AS ns, pg_backend_pid() AS pid FROM acknowledged")
        XCTAssertEqual(try rows.first?.decode("ns", as: String.self), "{1,2}", "each write landed exactly once")
        XCTAssertNotEqual(try rows.first?.decode("pid", as: Int.self), firstBackend, "the read-only session was closed")
    }

    func testAWriteAServerKeepsRefusingFailsAsUnavailable() async throws {
        let url = try TestDatabase.makeDatabase { connection in
            try connection.execute(unsafeSQL: "CREATE TABLE refused (n int)")
        }
        let database = try XCTUnwrap(URLComponents(string: url)?.path.dropFirst())
        // Every session of this database is read-only, like a standby.
        let admin = try PGConnection(connectionString: url)
        try admin.execute(unsafeSQL: "ALTER DATABASE \(database) SET default_transaction_read_only = on")
        let pool = PGPool(connectionString: url, size: 1, logger: logger)
        defer { pool.shutdown() }
        let statementError = await assertPGErrorAsync { try await pool.query("INSERT INTO refused VALUES (1)") }
        XCTAssertEqual(statementError?.sqlState, .readOnlySQLTransaction)
        XCTAssertEqual(statementError?.isConnectionFailure, true, "answered as 503, not 500")
        let sessionError = await assertPGErrorAsync {
            _ = try await pool.withTransaction { try $0.query("INSERT INTO refused VALUES (2)") }
        }
        XCTAssertEqual(sessionError?.isReadOnlyRefusal, true)
        let rows = try await pool.read("SELECT count(*)::int AS c FROM refused")
        XCTAssertEqual(try rows.first?.decode("c", as: Int.self), 0)
    }

    func testWithoutPreparedStatementsPipelinedStatementsRunUnnamed() async throws {
        let url = try TestDatabase.makeDatabase()
        let unnamed = PGPool(connectionString: url, size: 1, preparedStatements: false, logger: logger)
        defer { unnamed.shutdown() }
        let named = PGPool(connectionString: url, size: 1, logger: logger)
        defer { named.shutdown() }
        let count: PGQuery = "SELECT count(*)::int AS c FROM pg_prepared_statements"
        for pool in [unnamed, named] {
            for index in 0..<3 {
                try await pool.query("SELECT \(index)::int AS n")
                _ = try await pool.read("SELECT \(index)::int AS m", plan: .generic)
            }
        }
        let unnamedCount = try await unnamed.withConnection { try $0.query(count).first!.decode("c", as: Int.self) }
        let namedCount = try await named.withConnection { try $0.query(count).first!.decode("c", as: Int.self) }
        XCTAssertEqual(unnamedCount, 0, "nothing a transaction pooler would lose")
        XCTAssertEqual(namedCount, 2)
    }
}
