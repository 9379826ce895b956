import Foundation
import Logging
import PGClient
import Synchronization
import TestSupport
import XCTest

/// PGPool: concurrency, exhaustion, shutdown and recovery after a server restart.
final class PoolTests: XCTestCase {
    private var logger: Logger {
        var logger = Logger(label: "PoolTests")
        logger.logLevel = .error
        return logger
    }

    func testManyConcurrentQueries() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 4, logger: logger)
        defer { pool.shutdown() }
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let doubled = try await pool.withConnection { connection in
                        try single(connection.query("SELECT \(index) * 2 AS v, pg_backend_pid() AS pid")).decode(
                            "v", as: Int.self)
                    }
                    return (index, doubled)
                }
            }
            var results = [Int: Int]()
            for try await (index, doubled) in group { results[index] = doubled }
            return results
        }
        XCTAssertEqual(results.count, 200)
        for index in 0..<200 { XCTAssertEqual(results[index], index * 2) }
        let stats = pool.stats
        XCTAssertEqual(stats.size, 4)
        XCTAssertLessThanOrEqual(stats.open, 4)
        XCTAssertEqual(stats.inUse, 0)
        XCTAssertEqual(stats.waiting, 0)
    }

    func testTransactionsThroughThePool() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 2, logger: logger)
        defer { pool.shutdown() }
        try await pool.withConnection { try $0.execute(unsafeSQL: "CREATE TABLE t (n integer)") }
        struct Abort: Error {}
        do {
            try await pool.withTransaction { connection in
                try connection.query("INSERT INTO t VALUES (1)")
                throw Abort()
            }
            XCTFail("expected Abort")
        } catch is Abort {}
        try await pool.withTransaction { try $0.query("INSERT INTO t VALUES (2)") }
        let values = try await pool.query("SELECT n FROM t").map { try $0.decode("n", as: Int.self) }
        XCTAssertEqual(values, [2])

        // A body that leaves a transaction open does not leak it into the next job.
        try await pool.withConnection { try $0.execute(unsafeSQL: "BEGIN; INSERT INTO t VALUES (3)") }
        for _ in 0..<4 {
            let open = try await pool.withConnection { connection in
                try single(connection.query("SELECT count(*) AS n FROM t")).decode("n", as: Int.self)
            }
            XCTAssertEqual(open, 1)
        }
        // Blocking variant, for CLI use.
        XCTAssertEqual(
            try pool.withConnectionSync { try single($0.query("SELECT 7 AS v")).decode("v", as: Int.self) }, 7)
    }

    func testExhaustedPoolFailsPromptly() async throws {
        let pool = PGPool(
            connectionString: try TestDatabase.makeDatabase(), size: 1,
            acquireTimeout: .milliseconds(300), logger: logger)
        defer { pool.shutdown() }
        let holder = Task {
            try await pool.withConnection { try $0.query("SELECT pg_sleep(3)") }
        }
        // Wait (bounded) until the only connection is taken.
        for _ in 0..<200 where pool.stats.inUse == 0 { try await Task.sleep(for: .milliseconds(25)) }
        XCTAssertEqual(pool.stats.inUse, 1)

        let started = ContinuousClock.now
        let error = await assertPGErrorAsync { _ = try await pool.query("SELECT 1") }
        XCTAssertEqual(error?.kind, .poolExhausted)
        XCTAssertTrue(error?.isServiceUnavailable ?? false)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))

        _ = try await holder.value
        let one = try await pool.withConnection { try single($0.query("SELECT 1 AS one")).decode("one", as: Int.self) }
        XCTAssertEqual(one, 1, "the pool works again once the connection is free")
    }

    /// A statement queued behind a running pipeline while another worker is idle (it may not open a second lane)
    /// expires like any waiting job: the reaper deciding so once crashed the process (an access conflict on the
    /// queue), as in a cluster whose commits all waited for a synchronous standby.
    func testStatementWaitingBehindABusyPipelineExpires() async throws {
        let pool = PGPool(
            connectionString: try TestDatabase.makeDatabase(), size: 4,
            acquireTimeout: .milliseconds(300), logger: logger)
        defer { pool.shutdown() }
        // Size 4: two pipeline lanes, so whether a second may open depends on the queue's length.
        let holder = Task { try await pool.query("SELECT pg_sleep(3)") }
        for _ in 0..<200 where pool.stats.inUse == 0 { try await Task.sleep(for: .milliseconds(25)) }
        XCTAssertEqual(pool.stats.inUse, 1)

        let error = await assertPGErrorAsync { _ = try await pool.query("SELECT 1") }
        XCTAssertEqual(error?.kind, .poolExhausted)
        XCTAssertEqual(pool.stats.waiting, 0)

        _ = try await holder.value
        let one = try single(try await pool.query("SELECT 1 AS one")).decode("one", as: Int.self)
        XCTAssertEqual(one, 1, "the pool works again once the pipeline is done")
    }

    /// A job's statement timeout override is kept on its connection for the next job wanting the same one (no
    /// round trips), pipelined or not, and every other job runs with the pool's timeout.
    func testStatementTimeoutOverrideAppliesToItsJobsOnly() async throws {
        let pool = PGPool(
            connectionString: try TestDatabase.makeDatabase(), size: 1, statementTimeout: .seconds(60),
            logger: logger)
        defer { pool.shutdown() }
        let setting = "SELECT current_setting('statement_timeout') AS v, pg_backend_pid() AS pid"
        @Sendable func inSession() async throws -> (String, Int) {
            try await pool.withConnection { connection in
                let row = try single(connection.query(PGQuery(unsafeSQL: setting)))
                return (try row.decode("v", as: String.self), try row.decode("pid", as: Int.self))
            }
        }
        @Sendable func overridden() async throws -> (String, Int) {
            try await PGPool.$statementTimeoutOverride.withValue(.milliseconds(1234)) { try await inSession() }
        }
        let first = try await overridden()
        XCTAssertEqual(first.0, "1234ms")
        let again = try await overridden()
        XCTAssertEqual(again.0, "1234ms", "the same override again")
        let read = try single(try await pool.read(PGQuery(unsafeSQL: setting)))
        XCTAssertEqual(try read.decode("v", as: String.self), "1min", "a pipelined read after an override")
        let afterRead = try await overridden()
        XCTAssertEqual(afterRead.0, "1234ms")
        let plain = try await inSession()
        XCTAssertEqual(plain.0, "1min", "a job without an override after one")
        XCTAssertEqual(plain.1, first.1, "one connection throughout")
        _ = try await overridden()
        let written = try single(try await pool.query(PGQuery(unsafeSQL: setting)))
        XCTAssertEqual(try written.decode("v", as: String.self), "1min", "a pipelined write after an override")
        let overriddenRead = try await PGPool.$statementTimeoutOverride.withValue(.milliseconds(1234)) {
            try single(try await pool.read(PGQuery(unsafeSQL: setting)))
        }
        XCTAssertEqual(try overriddenRead.decode("v", as: String.self), "1234ms", "a pipelined read under an override")
        let readAgain = try single(try await pool.read(PGQuery(unsafeSQL: setting)))
        XCTAssertEqual(try readAgain.decode("v", as: String.self), "1min", "a pipelined read after it")
        let cancelled = await assertPGErrorAsync {
            try await PGPool.$statementTimeoutOverride.withValue(.milliseconds(100)) {
                _ = try await pool.read("SELECT pg_sleep(5)")
            }
        }
        XCTAssertEqual(cancelled?.sqlState, .queryCanceled, "the override cancels a pipelined statement")
    }

    /// Statements under another timeout (an expensive request's) pipeline apart: a slow one never holds up a short
    /// read, which opens a lane of its own although fewer than half a pipeline's worth wait.
    func testSlowStatementUnderAnOverrideDoesNotHoldUpShortReads() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 4, logger: logger)
        defer { pool.shutdown() }
        let slowDone = Atomic<Bool>(false)
        let slow = Task {
            try await PGPool.$statementTimeoutOverride.withValue(.seconds(30)) {
                _ = try await pool.read("SELECT pg_sleep(3)")
            }
            slowDone.store(true, ordering: .sequentiallyConsistent)
        }
        for _ in 0..<200 where pool.stats.inUse == 0 { try await Task.sleep(for: .milliseconds(25)) }
        XCTAssertEqual(pool.stats.inUse, 1)
        let one = try single(try await pool.read("SELECT 1 AS one")).decode("one", as: Int.self)
        XCTAssertEqual(one, 1)
        XCTAssertFalse(slowDone.load(ordering: .sequentiallyConsistent), "answered while the slow statement ran")
        try await slow.value
    }

    func testShutdownFailsNewWork() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 1, logger: logger)
        _ = try await pool.query("SELECT 1")
        pool.shutdown()
        let error = await assertPGErrorAsync { _ = try await pool.query("SELECT 1") }
        XCTAssertEqual(error?.kind, .poolShutdown)
    }

    func testUnreachableServerFailsFast() async throws {
        let pool = PGPool(connectionString: "postgresql://nobody@127.0.0.1:1/none", size: 2, logger: logger)
        defer { pool.shutdown() }
        let started = ContinuousClock.now
        let error = await assertPGErrorAsync { _ = try await pool.query("SELECT 1") }
        XCTAssertTrue(error?.isConnectionFailure ?? false)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
        XCTAssertEqual(pool.stats.open, 0)
    }

    func testPoolRecoversAfterServerRestart() async throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "restart")
        let url = try cluster.start()
        defer { try? cluster.stop() }
        let pool = PGPool(connectionString: url, size: 2, acquireTimeout: .seconds(5), logger: logger)
        defer { pool.shutdown() }

        @Sendable func answer() async throws -> Int {
            try await pool.withConnection { try single($0.query("SELECT 41 + 1 AS v")).decode("v", as: Int.self) }
        }
        // Open both connections.
        async let first = answer()
        async let second = answer()
        let (a, b) = try await (first, second)
        XCTAssertEqual([a, b], [42, 42])

        try cluster.stop()
        XCTAssertFalse(cluster.isRunning)
        for _ in 0..<3 {
            let started = ContinuousClock.now
            let error = await assertPGErrorAsync { _ = try await answer() }
            XCTAssertTrue(error?.isConnectionFailure ?? false, "\(String(describing: error))")
            XCTAssertTrue(error?.isServiceUnavailable ?? false)
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
        }

        let restartedURL = try cluster.start()
        XCTAssertEqual(restartedURL, url, "the remembered port is reused")
        for _ in 0..<6 {
            let value = try await answer()
            XCTAssertEqual(value, 42)
        }
        XCTAssertGreaterThan(pool.stats.open, 0)
    }

    func testEmbeddedClusterSurvivesStalePidFileAndRestarts() throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "stale")
        let url = try cluster.start()
        XCTAssertTrue(cluster.isRunning)
        XCTAssertEqual(try cluster.start(), url, "start() on a running cluster reuses it")
        try cluster.stop()
        XCTAssertFalse(cluster.isRunning)
        try cluster.stop()  // stopping twice is harmless

        // Fake a crash: a postmaster.pid whose process is gone.
        let pidFile = cluster.dataDirectory.appendingPathComponent("postmaster.pid")
        try "999999\n\(cluster.dataDirectory.path)\n0\n1\n\n\n\n".write(to: pidFile, atomically: true, encoding: .utf8)
        let again = try cluster.start()
        XCTAssertEqual(again, url)
        let connection = try PGConnection(connectionString: again)
        XCTAssertEqual(
            try single(connection.query("SELECT current_database() AS db")).decode("db", as: String.self),
            "quotevault")
        try cluster.stop()
    }
}
