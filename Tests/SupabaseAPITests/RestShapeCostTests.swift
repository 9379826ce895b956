import Foundation
import PGClient
import TestSupport
import XCTest

/// Issue 42: a `/rest/v1` request is expensive by its parsed shape, whatever its text looks like (a configured
/// full-text operator, a negated regular expression, a pattern deep in groups, an order no index serves), and the
/// anonymous role's reads of public tables run on the public reads' pool.
final class RestShapeCostTests: XCTestCase {
    /// `quotes` locked exclusively until the test ends: every read of it waits, on whichever pool it runs.
    private final class LockedQuotes: @unchecked Sendable {
        // @unchecked: one test thread uses the connection.
        let connection: PGConnection
        init(_ databaseURL: String) throws {
            connection = try PGConnection(connectionString: databaseURL)
            try connection.execute(unsafeSQL: "BEGIN; LOCK TABLE quotes IN ACCESS EXCLUSIVE MODE")
        }
        func blockedStatements() throws -> Int {
            _ = try connection.query("SELECT pg_stat_clear_snapshot()")
            let rows = try connection.query(
                "SELECT count(*)::int8 AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
            return try rows[0].decode("n", as: Int.self)
        }
        /// Until `count` statements wait on the lock (at most 10 s).
        func untilBlocked(_ count: Int) throws {
            var tries = 0
            while try blockedStatements() < count, tries < 200 {
                tries += 1
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        func unlock() { try? connection.execute(unsafeSQL: "ROLLBACK") }
    }

    /// An app whose expensive statements are cancelled after 200 ms, every other statement after a minute.
    private func start() async throws -> TestApp {
        let app = try await TestApp.start {
            $0.expensiveStatementTimeoutMilliseconds = 200
            $0.statementTimeoutMilliseconds = 60_000
            $0.databasePublicPoolSize = 8  // room beside the cheap reads held on the lock
        }
        addTeardownBlock { await app.stop() }
        return app
    }

    /// The statuses of `requests` (a path and the user sending it, nil: the anon key), each sent on a thread of its
    /// own at once; the closure returned waits for them.
    private func concurrently(_ app: TestApp, _ requests: [(String, TestUser?)]) -> () -> [Int] {
        let group = DispatchGroup()
        let statuses = LockedArray(count: requests.count)
        for (index, (path, user)) in requests.enumerated() {
            group.enter()
            Thread.detachNewThread {
                statuses.set(index, (try? app.supabase("GET", path, as: user).status) ?? 0)
                group.leave()
            }
        }
        return {
            group.wait()
            return statuses.values
        }
    }

    /// One request that must be answered within 10 s (an expensive one is cancelled after 200 ms).
    private func promptly(
        _ app: TestApp, _ method: String, _ path: String, as user: TestUser? = nil, body: [String: Any]? = nil
    ) throws -> HTTPTestResponse {
        let connection = try HTTPTestConnection(port: app.application.port, timeoutSeconds: 10, source: "127.0.0.2")
        defer { connection.close() }
        var headers = app.supabaseHeaders(user)
        headers["Content-Type"] = "application/json"
        return try connection.send(
            method, path, headers: headers, body: try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
        )
    }

    private final class LockedArray: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private let lock = NSLock()
        private var storage: [Int]
        init(count: Int) { storage = Array(repeating: 0, count: count) }
        func set(_ index: Int, _ value: Int) { lock.withLock { storage[index] = value } }
        var values: [Int] { lock.withLock { storage } }
    }

    func testEveryPatternOperatorIsExpensiveHoweverWritten() async throws {
        let app = try await start()
        let cheap = [
            "/rest/v1/quotes?select=id&limit=1", "/rest/v1/quotes?author=isdistinct.x",
            "/rest/v1/quotes?author=not.eq.x&order=created_at.desc", "/rest/v1/quotes?order=author",
        ]
        let lock = try LockedQuotes(app.databaseURL)
        let waiting = concurrently(app, cheap.map { ($0, nil) })
        try lock.untilBlocked(cheap.count)
        for path in [
            "author=not.wfts(simple).zzzq", "text=fts(english).x", "text=fts.x", "text=plfts.x", "text=phfts(simple).x",
            "text=wfts.x", "text=like.x", "text=ilike.*x*", "text=not.ilike.x", "text=match.x", "text=imatch.x",
            "text=not.match.x", "or=(id.is.null,and(author.eq.a,not.or(text.imatch.x)))",
            "not.and=(text.phfts.x,id.is.null)", "order=text.desc,author&offset=10&limit=5",
        ] {
            let encoded = path.replacingOccurrences(of: "(", with: "%28").replacingOccurrences(of: ")", with: "%29")
            let response = try promptly(app, "GET", "/rest/v1/quotes?\(encoded)")
            XCTAssertEqual(response.status, 503, "\(path) is expensive: cancelled at its class's timeout")
            XCTAssertEqual(try response.jsonObject()["code"] as? String, "57014", response.text)
        }
        lock.unlock()
        XCTAssertEqual(waiting(), Array(repeating: 200, count: cheap.count), "cheap reads keep the pool's timeout")
    }

    /// A write's filters are classified the same way: cancelled at the expensive timeout, nothing changed.
    func testAPatternFilteredWriteIsExpensive() async throws {
        let app = try await start()
        let user = try await app.makeUser()
        let created = try app.supabase("POST", "/rest/v1/collections", as: user, body: ["name": "Kept"])
        XCTAssertEqual(created.status, 201, created.text)
        let lock = try LockedQuotes(app.databaseURL)
        defer { lock.unlock() }
        // The answer embeds quotes, so the statement waits on the lock.
        let patch = try promptly(
            app, "PATCH",
            "/rest/v1/collections?name=not.imatch.zz&select=id,collection_quotes(quotes(id))"
                .replacingOccurrences(of: "(", with: "%28")
                .replacingOccurrences(of: ")", with: "%29"), as: user, body: ["name": "Renamed"])
        XCTAssertEqual(patch.status, 503, patch.text)
        lock.unlock()
        let name = try app.supabase("GET", "/rest/v1/collections?select=name", as: user).jsonArray.first?["name"]
        XCTAssertEqual(name as? String, "Kept")
    }

    func testAnonymousReadsOfPublicTablesUseThePublicPool() async throws {
        let app = try await start()
        let user = try await app.makeUser()
        let lock = try LockedQuotes(app.databaseURL)
        let publicPool = app.application.context.publicPool, pool = app.application.context.pool
        let anonymous = concurrently(app, [("/rest/v1/quotes?select=id&limit=1", nil)])
        try lock.untilBlocked(1)
        XCTAssertEqual(publicPool.stats.inUse, 1, "the anonymous read holds a public connection")
        XCTAssertEqual(pool.stats.inUse, 0, "and none of the connections logins and writes use")
        let signedIn = concurrently(app, [("/rest/v1/user_favorites?select=quote_id,quotes%28id%29", user)])
        try lock.untilBlocked(2)
        XCTAssertEqual(pool.stats.inUse, 1, "a user's read of their rows runs on the main pool")
        lock.unlock()
        XCTAssertEqual(anonymous(), [200])
        XCTAssertEqual(signedIn(), [200])
    }
}
