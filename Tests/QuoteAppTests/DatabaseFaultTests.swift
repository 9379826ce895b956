import Foundation
import Logging
import PGClient
import TestSupport
import XCTest

/// A database fault never answers 500: on every surface (`/v1`, `/auth/v1`, `/rest/v1`, `/storage/v1`) each kind of
/// database unavailability answers `503` with `Retry-After`, in the surface's own error dialect. One test per fault,
/// each sending every surface's probe (a write, so that a read-only server refuses it too).
final class DatabaseFaultTests: XCTestCase {
    enum Surface: String, CaseIterable { case v1, auth, rest, storage }

    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64)

    private var logger: Logger {
        var logger = Logger(label: "DatabaseFaultTests")
        logger.logLevel = .critical
        return logger
    }

    /// One write on `surface` that needs the database.
    private static func probe(_ surface: Surface, _ app: TestApp, _ user: TestUser) throws -> HTTPTestResponse {
        let name = "probe-\(UUID().uuidString.prefix(8).lowercased())"
        switch surface {
        case .v1:
            return try app.client.send("POST", "/v1/collections", json: ["name": name], headers: user.authorization)
        case .auth:
            let body = ["email": "\(name)@example.com", "password": "correct horse"]
            return try app.supabase("POST", "/auth/v1/signup", body: body)
        case .rest:
            return try app.supabase("POST", "/rest/v1/collections", as: user, body: ["name": name])
        case .storage:
            let boundary = "6f556c5abdee57bcf55f2ad343706e42"
            var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; ".utf8)
            body += Array("filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n".utf8) + Self.png
            body += Array("\r\n--\(boundary)--\r\n".utf8)
            let contentType = "multipart/form-data; boundary=\(boundary)"
            return try app.client.send(
                "POST", "/storage/v1/object/avatars/\(user.id.uuidString.lowercased())/\(name).png",
                headers: app.supabaseHeaders(user, ["Content-Type": contentType]), body: body)
        }
    }

    /// 503, a `Retry-After` of whole seconds, and the surface's error body.
    private func assertUnavailable(
        _ response: HTTPTestResponse, _ surface: Surface, _ fault: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let context = "\(fault) on \(surface): \(response.status) \(response.text)"
        XCTAssertEqual(response.status, 503, context, file: file, line: line)
        XCTAssertGreaterThanOrEqual(Int(response.header("Retry-After") ?? "") ?? 0, 1, context, file: file, line: line)
        let body = try response.jsonObject()
        switch surface {
        case .v1:
            XCTAssertEqual(response.header("Content-Type"), "application/problem+json", context, file: file, line: line)
            XCTAssertEqual(body["code"] as? String, "service_unavailable", context, file: file, line: line)
            XCTAssertEqual(body["status"] as? Int, 503, context, file: file, line: line)
        case .auth:
            XCTAssertEqual(body["code"] as? String, "service_unavailable", context, file: file, line: line)
            XCTAssertNotNil(body["msg"] as? String, context, file: file, line: line)
            XCTAssertNotNil(response.header("X-Supabase-Api-Version"), context, file: file, line: line)
        case .rest:
            XCTAssertNotNil(body["code"] as? String, context, file: file, line: line)
            XCTAssertNotNil(body["message"] as? String, context, file: file, line: line)
            XCTAssertTrue(body.keys.contains("details") && body.keys.contains("hint"), context, file: file, line: line)
        case .storage:
            XCTAssertEqual(body["statusCode"] as? String, "503", context, file: file, line: line)
            XCTAssertNotNil(body["error"] as? String, context, file: file, line: line)
            XCTAssertNotNil(body["message"] as? String, context, file: file, line: line)
        }
    }

    /// A connection of the test's own to the app's database (outside the app's pools).
    private func connection(_ app: TestApp) throws -> PGConnection {
        try PGConnection(connectionString: app.databaseURL, logger: logger)
    }

    /// A connection holding every table the probes write locked, so that each probe waits.
    private func lockingTheProbedTables(_ app: TestApp) throws -> PGConnection {
        let admin = try connection(app)
        try admin.execute(unsafeSQL: "BEGIN")
        try admin.execute(unsafeSQL: "LOCK TABLE users, sessions, collections, avatars IN ACCESS EXCLUSIVE MODE")
        return admin
    }

    func testAnUnreachableDatabaseAnswers503OnEverySurface() async throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "faults")
        let url = try cluster.start()
        let app = try await startTestApp(databaseURL: url)
        let user = try await app.makeUser()
        try cluster.stop()
        for surface in Surface.allCases {
            try assertUnavailable(try Self.probe(surface, app, user), surface, "database stopped")
        }
    }

    func testACommitNoStandbyConfirmsAnswers503OnEverySurface() async throws {
        // A primary whose synchronous standby is gone (named, never there): every commit waits for it until the
        // statement timeout cuts the wait. The write committed here, but nothing says a standby has it.
        let cluster = try TestDatabase.makeDedicatedCluster(label: "syncrep")
        let url = try cluster.start()
        defer { try? cluster.stop() }
        let app = try await startTestApp(databaseURL: url) { $0.statementTimeoutMilliseconds = 300 }
        let user = try await app.makeUser()
        let admin = try connection(app)
        try admin.execute(unsafeSQL: "ALTER SYSTEM SET synchronous_commit = on")
        try admin.execute(unsafeSQL: "ALTER SYSTEM SET synchronous_standby_names = 'gone_standby'")
        try admin.query("SELECT pg_reload_conf()")
        for surface in Surface.allCases {
            try assertUnavailable(try Self.probe(surface, app, user), surface, "commit not confirmed by a standby")
        }
        XCTAssertEqual(try app.client.get("/v1/quotes").status, 200, "reads commit nothing and go on")
        try admin.execute(unsafeSQL: "ALTER SYSTEM RESET synchronous_standby_names")
        try admin.query("SELECT pg_reload_conf()")
        XCTAssertEqual(try Self.probe(.v1, app, user).status, 201, "writes are acknowledged again")
    }

    func testAReadOnlyDatabaseAnswers503OnEverySurface() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let admin = try connection(app)
        // New sessions are read-only (as on a demoted primary); the app's sessions are ended so it reconnects.
        let database = try admin.query("SELECT current_database() AS name")[0].decode("name", as: String.self)
        try admin.execute(unsafeSQL: "ALTER DATABASE \"\(database)\" SET default_transaction_read_only = on")
        try admin.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """)
        for surface in Surface.allCases {
            try assertUnavailable(try Self.probe(surface, app, user), surface, "read-only database")
        }
        try admin.execute(unsafeSQL: "ALTER DATABASE \"\(database)\" RESET default_transaction_read_only")
    }

    func testAStatementPastTheTimeoutAnswers503OnEverySurface() async throws {
        let app = try await startTestApp { $0.statementTimeoutMilliseconds = 200 }
        let user = try await app.makeUser()
        let admin = try lockingTheProbedTables(app)
        for surface in Surface.allCases {
            try assertUnavailable(try Self.probe(surface, app, user), surface, "statement timeout")
        }
        try admin.execute(unsafeSQL: "ROLLBACK")
        XCTAssertEqual(try Self.probe(.v1, app, user).status, 201, "writes go on once the lock is gone")
    }

    func testAConnectionLostMidRequestAnswers503OnEverySurface() async throws {
        let app = try await startTestApp { $0.statementTimeoutMilliseconds = 0 }
        let user = try await app.makeUser()
        let admin = try lockingTheProbedTables(app)
        let watcher = try connection(app)
        for surface in Surface.allCases {
            let answer = Background { try Self.probe(surface, app, user) }
            // Once the probe's statement waits for the lock, its backend is terminated under it.
            var terminated = 0
            for _ in 0..<100 where terminated == 0 {  // at most ~10 s
                terminated = try watcher.query(
                    """
                    SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock'
                    """)[0].decode("n", as: Int.self)
                if terminated == 0 { try await Task.sleep(for: .milliseconds(100)) }
            }
            XCTAssertEqual(terminated, 1, "\(surface)'s probe waited for the lock")
            try assertUnavailable(try answer.value(), surface, "connection lost")
        }
        try admin.execute(unsafeSQL: "ROLLBACK")
    }

    func testAnExhaustedPoolAnswers503OnEverySurfaceWhilePublicReadsGoOn() async throws {
        let app = try await startTestApp {
            $0.databasePoolSize = 1
            $0.databasePublicPoolSize = 1
            $0.databaseAcquireTimeout = .milliseconds(200)
            $0.answerCacheBytes = 0
        }
        let user = try await app.makeUser()
        _ = try await app.insertQuotes(["A public quote"])
        // Every connection of the write pool held, as by writes waiting for a synchronous standby.
        let writes = Hold(app.pool)
        try await writes.taken()
        for surface in Surface.allCases {
            try assertUnavailable(try Self.probe(surface, app, user), surface, "write pool exhausted")
        }
        let page = try app.client.get("/v1/quotes")
        XCTAssertEqual(page.status, 200, "public reads have connections of their own: \(page.text)")
        XCTAssertEqual(try app.client.get("/v1/quotes/search?q=public").status, 200)
        XCTAssertEqual(try app.client.get("/v1/categories").status, 200)
        XCTAssertEqual(try app.client.get("/ready").text, #"{"status":"ready"}"#, "the instance stays in rotation")

        let reads = Hold(app.application.context.publicPool)
        try await reads.taken()
        try assertUnavailable(try app.client.get("/v1/quotes"), .v1, "public pool exhausted")
        await reads.release()
        await writes.release()
        XCTAssertEqual(try Self.probe(.v1, app, user).status, 201, "writes go on once connections are free")
    }

    func testTheQuoteOfTheDayOfAnEmptyCorpusIsNotFoundOnBothDoors() async throws {
        let app = try await startTestApp()
        let v1 = try app.client.get("/v1/qotd")
        XCTAssertEqual(v1.status, 404, v1.text)
        let rest = try app.supabase("POST", "/rest/v1/rpc/get_quote_of_the_day", body: [String: Any]())
        XCTAssertEqual(rest.status, 404, rest.text)
        XCTAssertNotNil(try rest.jsonObject()["message"] as? String)
        XCTAssertTrue(try rest.jsonObject().keys.contains("details"))
    }
}

/// Every connection of a pool held by a job that waits until released.
private final class Hold: Sendable {
    private let pool: PGPool
    private let gate = DispatchSemaphore(value: 0)
    private let task: Task<Void, any Error>

    init(_ pool: PGPool) {
        self.pool = pool
        let gate = self.gate
        let size = pool.stats.size
        task = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<size { group.addTask { try await pool.withConnection { _ in gate.wait() } } }
                try await group.waitForAll()
            }
        }
    }

    /// Waits (at most ~10 s) until every connection is taken.
    func taken() async throws {
        for _ in 0..<100 where pool.stats.inUse < pool.stats.size { try await Task.sleep(for: .milliseconds(100)) }
        XCTAssertEqual(pool.stats.inUse, pool.stats.size, "the pool is held")
    }

    func release() async {
        for _ in 0..<pool.stats.size { gate.signal() }
        _ = try? await task.value
    }
}

/// A blocking call run on a thread of its own (never on the cooperative pool the server's handlers need).
private final class Background<T: Sendable>: @unchecked Sendable {
    // @unchecked: `result` is written once by the thread before `done` is signalled, read after.
    private var result: Result<T, any Error>?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> T) {
        Thread {
            self.result = Result { try body() }
            self.done.signal()
        }.start()
    }

    func value() throws -> T {
        done.wait()
        return try result!.get()
    }
}
