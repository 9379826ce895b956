import Foundation
import PGClient
import QuoteAPI
import TestSupport
import XCTest

/// The pools' fair share over HTTP. Each client is a source address editing its own quote through `/rest/v1` with
/// the service role key (one transaction on one connection, no session to look up); the test holds the quotes' row
/// locks, so which requests hold connections and which wait is decided by the server, not by timing.
final class FairQueueTests: XCTestCase {
    /// A transaction of the test's own holding `quotes`' rows until `release()`.
    private final class RowLock {
        private let connection: PGConnection

        init(_ url: String, _ quotes: [UUID]) throws {
            connection = try PGConnection(connectionString: url)
            try connection.execute(unsafeSQL: "BEGIN")
            for quote in quotes { try connection.query("SELECT 1 FROM quotes WHERE id = \(quote) FOR UPDATE") }
        }

        func release() throws { try connection.execute(unsafeSQL: "COMMIT") }
    }

    /// An edit of `quote` from `source`, sent on a thread of its own (the client blocks); `status` once answered.
    private final class Edit: Sendable {
        private let answered = Locked<Int?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ app: TestApp, from source: String, _ quote: UUID) {
            let port = app.application.port
            let key = app.application.context.configuration.supabaseServiceRoleKey
            Thread { [answered, done] in
                let answer = try? HTTPTestConnection(port: port, timeoutSeconds: 30, source: source).send(
                    "PATCH", "/rest/v1/quotes?id=eq.\(quote.uuidString.lowercased())",
                    headers: ["apikey": key, "Authorization": "Bearer \(key)", "Content-Type": "application/json"],
                    body: Array(#"{"author":"Edited"}"#.utf8))
                if let answer, answer.status >= 300 { print("FairQueueTests: \(answer.status) \(answer.text)") }
                answered.value = answer?.status ?? 0
                done.signal()
            }.start()
        }

        var status: Int? { answered.value }

        func wait() -> Int? {
            _ = done.wait(timeout: .now() + 20)
            return answered.value
        }
    }

    /// Waits (bounded) until `condition` holds.
    private func waitFor(_ what: String, in app: TestApp, _ condition: () -> Bool) async throws {
        for _ in 0..<1000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssert(
            condition(),
            "timed out waiting for \(what): \(app.pool.stats), public \(app.application.context.publicPool.stats)")
    }

    func testOneClientHoldsAtMostHalfThePoolAndAnotherIsServedBesideIt() async throws {
        let app = try await startTestApp {
            $0.databasePoolSize = 2
            $0.statementTimeoutMilliseconds = 60_000
        }
        let quotes = try await app.insertQuotes((0..<3).map { "Half the pool \($0)" })
        let lock = try RowLock(app.databaseURL, [quotes[0], quotes[1]])
        // At the edge: the client's first edit holds one of the two connections (waiting on the lock).
        let first = Edit(app, from: "127.0.0.2", quotes[0])
        try await waitFor("the first edit to hold a connection", in: app) { app.pool.stats.inUse == 1 }
        // Past it: its second edit waits for the client's own, although a connection is free.
        let second = Edit(app, from: "127.0.0.2", quotes[1])
        try await waitFor("the second edit to wait", in: app) {
            app.pool.waitingClients.compactMap { $0 } == ["address:127.0.0.2"]
        }
        // The free connection serves another client at once.
        XCTAssertEqual(Edit(app, from: "127.0.0.3", quotes[2]).wait(), 204)
        XCTAssertNil(first.status)
        XCTAssertNil(second.status)
        try lock.release()
        XCTAssertEqual(first.wait(), 204)
        XCTAssertEqual(second.wait(), 204)
    }

    func testAConnectionFreedGoesToTheClientThatUsedTheDatabaseLeast() async throws {
        let app = try await startTestApp {
            $0.databasePoolSize = 4
            // The edits wait on the test's locks for as long as the steps take, however slow the machine.
            $0.statementTimeoutMilliseconds = 60_000
        }
        let quotes = try await app.insertQuotes((0..<8).map { "Fair queue \($0)" })
        let (heavy, light) = ("127.0.0.5", "127.0.0.6")
        let waiting = { app.pool.waitingClients.compactMap { $0 } }
        // The heavy client's edit waits on a lock for a while on its connection: database time charged to it.
        let warmUp = try RowLock(app.databaseURL, [quotes[0]])
        let heavyEdit = Edit(app, from: heavy, quotes[0])
        try await waitFor("the heavy edit to hold a connection", in: app) { app.pool.stats.inUse == 1 }
        try await Task.sleep(for: .milliseconds(300))
        try warmUp.release()
        XCTAssertEqual(heavyEdit.wait(), 204)
        let ledger = app.application.databaseTime
        XCTAssertGreaterThan(ledger.recentUse(of: "address:" + heavy), ledger.recentUse(of: "address:" + light) + 0.1)

        // Every connection held: two by one client (its half), one each by two others.
        let blockers = try RowLock(app.databaseURL, [quotes[1], quotes[2], quotes[4]])
        let firstLock = try RowLock(app.databaseURL, [quotes[3]])
        let held = [
            Edit(app, from: "127.0.0.2", quotes[1]), Edit(app, from: "127.0.0.2", quotes[2]),
            Edit(app, from: "127.0.0.3", quotes[3]), Edit(app, from: "127.0.0.4", quotes[4]),
        ]
        try await waitFor("every connection to be held", in: app) { app.pool.stats.inUse == 4 }
        // The heavy client asks first, the light one after it; each holds its connection once it has one.
        let waitingLocks = (
            heavy: try RowLock(app.databaseURL, [quotes[5]]), light: try RowLock(app.databaseURL, [quotes[6]])
        )
        let heavyWaiting = Edit(app, from: heavy, quotes[5])
        try await waitFor("the heavy edit to wait", in: app) { waiting() == ["address:" + heavy] }
        let lightWaiting = Edit(app, from: light, quotes[6])
        // (The server's own upkeep may queue jobs too, charged to no client: they go first, and are short.)
        try await waitFor("the light edit to wait", in: app) { waiting() == ["address:" + heavy, "address:" + light] }
        // One connection comes free: the lighter client's edit must take it. (Had the heavy one taken it, the
        // light edit would wait in the queue until its acquire timeout refused it.)
        try firstLock.release()
        XCTAssertEqual(held[2].wait(), 204)
        try await waitFor("one of the two to take the connection", in: app) { waiting().count == 1 }
        XCTAssertEqual(waiting(), ["address:" + heavy], "the light client goes first")
        try waitingLocks.light.release()
        XCTAssertEqual(lightWaiting.wait(), 204, "the light client goes first")
        XCTAssertNil(heavyWaiting.status, "the heavy client's edit waits for the next connection")
        try waitingLocks.heavy.release()
        try blockers.release()
        XCTAssertEqual(heavyWaiting.wait(), 204)
        for edit in held { XCTAssertEqual(edit.wait(), 204) }
    }
}
