import Foundation
import PGClient
import QuoteAPI
import TestSupport
import XCTest

/// Issue 30 over HTTP on the real server: expensive requests capped per address and in all with their own statement
/// timeout, the small bodies' reserved budget, large bodies only for a user's token, stalled uploads cut off.
final class FairUseTests: XCTestCase {
    private let patternQuery = "/rest/v1/quotes?select=id&text=ilike.*needle*"

    /// Holds an exclusive lock on `quotes` on a connection of its own until `release()`: every read of the table
    /// waits, so a request can be kept running for as long as a test needs.
    private final class TableLock: @unchecked Sendable {
        // @unchecked: the connection (a libpq pointer) is used by one test thread at a time.
        private let connection: PGConnection
        init(_ databaseURL: String) throws {
            connection = try PGConnection(connectionString: databaseURL)
            try connection.execute(unsafeSQL: "BEGIN; LOCK TABLE quotes IN ACCESS EXCLUSIVE MODE")
        }
        func release() { try? connection.execute(unsafeSQL: "ROLLBACK") }
        func waiting() throws -> Int {
            // Inside the lock's transaction the statistics are a snapshot unless cleared.
            _ = try connection.query("SELECT pg_stat_clear_snapshot()")
            return try connection.query(
                """
                SELECT count(*)::int8 AS n FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()
                """)[0].decode("n", as: Int.self)
        }
        /// Waits (bounded: 10 s) until `count` statements wait for the lock.
        func awaitWaiting(_ count: Int) throws {
            for _ in 0..<200 where try waiting() < count { Thread.sleep(forTimeInterval: 0.05) }
            XCTAssertGreaterThanOrEqual(try waiting(), count)
        }
    }

    private static func rest(_ app: TestApp, _ path: String, from source: String) throws -> HTTPTestResponse {
        let connection = try HTTPTestConnection(port: app.application.port, timeoutSeconds: 30, source: source)
        defer { connection.close() }
        return try connection.send("GET", path, headers: app.supabaseHeaders())
    }

    /// A request running on a thread of its own (blocking socket I/O must not take Swift's cooperative threads,
    /// which the server needs too); `status()` waits for its answer.
    private final class Background: @unchecked Sendable {
        // @unchecked: `answer` is written once by the thread before `done` is signalled, read after.
        private let done = DispatchSemaphore(value: 0)
        private var answer: Int?
        init(port: Int, path: String, headers: [String: String], source: String) {
            Thread.detachNewThread { [self] in
                let connection = try? HTTPTestConnection(port: port, timeoutSeconds: 30, source: source)
                answer = try? connection?.send("GET", path, headers: headers).status
                connection?.close()
                done.signal()
            }
        }
        func status() -> Int? {
            done.wait()
            return answer
        }
    }

    private func inBackground(_ app: TestApp, _ path: String, from source: String) -> Background {
        Background(port: app.application.port, path: path, headers: app.supabaseHeaders(), source: source)
    }

    func testExpensiveRequestsAreCappedPerAddressThenInAll() async throws {
        let app = try await startTestApp {
            $0.expensiveConcurrency = 3
            $0.databasePoolSize = 8  // the pool has room for every held request: the caps refuse, not the pool
            $0.expensiveStatementTimeoutMilliseconds = 60_000
            $0.httpRefusalDelay = 0
        }
        let lock = try TableLock(app.databaseURL)
        // At the per-address cap (2) from one address; the third is refused at once.
        let held = (0..<2).map { _ in inBackground(app, patternQuery, from: "127.0.0.2") }
        try lock.awaitWaiting(2)
        let pastAddressCap = try Self.rest(app, patternQuery, from: "127.0.0.2")
        XCTAssertEqual(pastAddressCap.status, 429, pastAddressCap.text)
        XCTAssertNotNil(pastAddressCap.header("Retry-After"))
        XCTAssertNotNil(try pastAddressCap.jsonObject()["message"], "PostgREST's error shape on /rest/v1")
        // Another address reaches the global cap (3); one past it is refused with 503.
        let third = inBackground(app, patternQuery, from: "127.0.0.3")
        try lock.awaitWaiting(3)
        let pastGlobalCap = try Self.rest(app, patternQuery, from: "127.0.0.4")
        XCTAssertEqual(pastGlobalCap.status, 503, pastGlobalCap.text)
        XCTAssertNotNil(pastGlobalCap.header("Retry-After"))
        // A cheap read is not expensive: it is admitted (it waits for the table like anyone).
        let cheap = inBackground(app, "/rest/v1/quotes?select=id&limit=1", from: "127.0.0.4")
        try lock.awaitWaiting(4)
        lock.release()
        for request in held + [third, cheap] { XCTAssertEqual(request.status(), 200) }
        XCTAssertEqual(try Self.rest(app, patternQuery, from: "127.0.0.2").status, 200, "the caps are given back")
    }

    /// Defaults: public reads have twice the cores in connections, expensive requests half the cores in all.
    func testByDefaultExpensiveRequestsRunOnHalfTheCoresBesideAPublicPoolOfTwiceThem() async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let app = try await startTestApp {
            // TestApp's small pool would cap the expensive share below half the cores on a machine of 6 or more.
            $0.databasePoolSize = 2 * cores
            $0.expensiveStatementTimeoutMilliseconds = 60_000
            $0.httpRefusalDelay = 0
        }
        XCTAssertTrue(
            try app.client.get("/metrics").text.contains("db_public_pool_connections{state=\"size\"} \(2 * cores)"))
        let cap = max(1, cores / 2)
        let lock = try TableLock(app.databaseURL)
        let held = (0..<cap).map { inBackground(app, patternQuery, from: "127.0.1.\($0 + 1)") }
        try lock.awaitWaiting(cap)
        let pastCap = try Self.rest(app, patternQuery, from: "127.0.2.1")
        XCTAssertEqual(pastCap.status, 503, "\(cap) expensive requests at once: \(pastCap.text)")
        lock.release()
        for request in held { XCTAssertEqual(request.status(), 200) }
    }

    func testSearchIsAnExpensiveRoute() async throws {
        let app = try await startTestApp {
            $0.expensiveConcurrency = 1
            $0.expensiveStatementTimeoutMilliseconds = 60_000
            $0.httpRefusalDelay = 0
        }
        let lock = try TableLock(app.databaseURL)
        let held = inBackground(app, patternQuery, from: "127.0.0.2")
        try lock.awaitWaiting(1)
        let search = try HTTPTestConnection(port: app.application.port, source: "127.0.0.3")
            .send("GET", "/v1/quotes/search?q=zzzq")
        XCTAssertEqual(search.status, 503, "the one expensive slot is taken: \(search.text)")
        XCTAssertEqual(try search.jsonObject()["code"] as? String, "service_unavailable", "problem+json on /v1")
        XCTAssertNotNil(search.header("Retry-After"))
        lock.release()
        XCTAssertEqual(held.status(), 200)
    }

    /// An app whose expensive requests time out after 200 ms and the others after a minute, with the table locked
    /// and `cheapPath` waiting on it from 127.0.0.3.
    private func cheapReadWaitingBesideAShortExpensiveTimeout(_ cheapPath: String) async throws
        -> (app: TestApp, lock: TableLock, cheap: Background)
    {
        let app = try await startTestApp {
            $0.expensiveStatementTimeoutMilliseconds = 200
            $0.statementTimeoutMilliseconds = 60_000
        }
        let lock = try TableLock(app.databaseURL)
        let cheap = inBackground(app, cheapPath, from: "127.0.0.3")
        try lock.awaitWaiting(1)
        return (app, lock, cheap)
    }

    func testExpensiveRequestsHaveTheirOwnStatementTimeout() async throws {
        let (app, lock, cheap) = try await cheapReadWaitingBesideAShortExpensiveTimeout(
            "/rest/v1/quotes?select=id&limit=1")
        let expensive = try Self.rest(app, patternQuery, from: "127.0.0.2")
        XCTAssertEqual(expensive.status, 503, "cancelled by the expensive class's timeout: \(expensive.text)")
        lock.release()
        XCTAssertEqual(cheap.status(), 200, "the cheap read's timeout is the pool's")
    }

    /// A search is a pipelined read; the expensive class's timeout still cancels it (503 with Retry-After on /v1),
    /// while a page read waiting on the same table keeps the pool's.
    func testASearchIsCancelledByTheExpensiveTimeout() async throws {
        let (app, lock, cheap) = try await cheapReadWaitingBesideAShortExpensiveTimeout("/v1/quotes?page_size=1")
        let search = try HTTPTestConnection(port: app.application.port, timeoutSeconds: 30, source: "127.0.0.2")
            .send("GET", "/v1/quotes/search?q=e")
        XCTAssertEqual(search.status, 503, "cancelled by the expensive class's timeout: \(search.text)")
        XCTAssertEqual(try search.jsonObject()["code"] as? String, "service_unavailable")
        let detail = try search.jsonObject()["detail"] as? String
        XCTAssertTrue(detail?.contains("took longer than the server allows") == true, "timed out: \(search.text)")
        XCTAssertNotNil(search.header("Retry-After"))
        lock.release()
        XCTAssertEqual(cheap.status(), 200, "the page read's timeout is the pool's")
    }
}
