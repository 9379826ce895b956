import Foundation
import Logging
import PGClient
import Synchronization
import TestSupport
import XCTest

/// A pool with a `DatabaseTimeLedger`: connection time charged to each job's client, the lightest client served
/// first, and no client holding more than half the connections.
final class FairPoolTests: XCTestCase {
    private var logger: Logger {
        var logger = Logger(label: "FairPoolTests")
        logger.logLevel = .error
        return logger
    }

    /// Jobs that hold their connection until `release()`, recording the order in which they started.
    private final class Holds: Sendable {
        private let started = Mutex<[String]>([])
        private let gates = Mutex<[String: DispatchSemaphore]>([:])

        func hold(_ name: String) -> DispatchSemaphore {
            gates.withLock { gates in
                if let gate = gates[name] { return gate }
                let gate = DispatchSemaphore(value: 0)
                gates[name] = gate
                return gate
            }
        }

        func job(_ name: String, on pool: PGPool, as client: String?) -> Task<Void, any Error> {
            let gate = hold(name)
            return Task {
                try await PGPool.$chargedClient.withValue(client) {
                    try await pool.withConnection { _ in
                        self.started.withLock { $0.append(name) }
                        gate.wait()
                    }
                }
            }
        }

        func release(_ name: String) { hold(name).signal() }
        var order: [String] { started.withLock { $0 } }
    }

    /// Waits (bounded) until `condition` holds.
    private func waitFor(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<1000 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssert(condition(), "timed out waiting for \(what)")
    }

    func testAJobsConnectionTimeIsChargedToItsClientWhileItRunsAndAfter() async throws {
        let ledger = DatabaseTimeLedger()
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 2, ledger: ledger, logger: logger)
        defer { pool.shutdown() }
        let holds = Holds()
        let running = holds.job("slow", on: pool, as: "address:10.0.0.1")
        try await waitFor("the job to start") { holds.order == ["slow"] }
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertGreaterThan(ledger.recentUse(of: "address:10.0.0.1"), 0.05, "counted while it runs")
        holds.release("slow")
        try await running.value
        let charged = ledger.recentUse(of: "address:10.0.0.1")
        XCTAssertGreaterThan(charged, 0.05)
        XCTAssertLessThan(charged, 10)
        XCTAssertEqual(ledger.recentUse(of: "address:10.0.0.2"), 0, "nothing charged to another client")

        // A pipelined statement is charged too.
        try await PGPool.$chargedClient.withValue("account:u1") {
            _ = try await pool.read("SELECT pg_sleep(0.05)")
        }
        XCTAssertGreaterThan(ledger.recentUse(of: "account:u1"), 0.03)
    }

    func testOneClientHoldsAtMostHalfThePoolAndAnotherGetsTheRest() async throws {
        let ledger = DatabaseTimeLedger()
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 4, ledger: ledger, logger: logger)
        defer { pool.shutdown() }
        let holds = Holds()
        // At the edge: a client's first two jobs run side by side (half of four connections).
        let first = holds.job("a1", on: pool, as: "address:10.0.0.1")
        let second = holds.job("a2", on: pool, as: "address:10.0.0.1")
        try await waitFor("two jobs of one client to run") { holds.order.count == 2 }
        // Past it: its third waits although two connections are free; another client's job does not.
        let third = holds.job("a3", on: pool, as: "address:10.0.0.1")
        try await waitFor("the third job to queue") { pool.stats.waiting == 1 }
        let other = holds.job("b1", on: pool, as: "address:10.0.0.2")
        try await waitFor("the other client's job to run") { holds.order.contains("b1") }
        XCTAssertFalse(holds.order.contains("a3"), "a client's third job waits while it holds half: \(holds.order)")
        XCTAssertEqual(pool.stats.waiting, 1)
        holds.release("a1")
        try await waitFor("the third job to run once the first is done") { holds.order.contains("a3") }
        for name in ["a2", "a3", "b1"] { holds.release(name) }
        for task in [first, second, third, other] { try await task.value }
        XCTAssertEqual(holds.order.prefix(2).sorted(), ["a1", "a2"])
        XCTAssertEqual(Array(holds.order.suffix(2)), ["b1", "a3"])
    }

    func testAWaitingJobOfTheLighterClientGoesFirst() async throws {
        let ledger = DatabaseTimeLedger()
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 2, ledger: ledger, logger: logger)
        defer { pool.shutdown() }
        // The heavy client has used the database recently; the light one has not.
        try await PGPool.$chargedClient.withValue("address:10.0.0.1") {
            try await pool.withConnection { try $0.execute(unsafeSQL: "SELECT pg_sleep(0.2)") }
        }
        XCTAssertGreaterThan(ledger.recentUse(of: "address:10.0.0.1"), 0.1)
        let holds = Holds()
        // Both connections busy (two other clients, one each).
        let blockers = [
            holds.job("x", on: pool, as: "address:10.0.0.8"), holds.job("y", on: pool, as: "address:10.0.0.9"),
        ]
        try await waitFor("both connections to be held") { holds.order.count == 2 }
        // The heavy client asks first, the light one after it.
        let heavy = holds.job("heavy", on: pool, as: "address:10.0.0.1")
        try await waitFor("the heavy client's job to queue") { pool.stats.waiting == 1 }
        let light = holds.job("light", on: pool, as: "address:10.0.0.2")
        try await waitFor("the light client's job to queue") { pool.stats.waiting == 2 }
        holds.release("x")
        try await waitFor("one of them to run") { holds.order.count == 3 }
        XCTAssertEqual(holds.order.last, "light", "the lighter client goes first: \(holds.order)")
        for name in ["y", "heavy", "light"] { holds.release(name) }
        for task in blockers + [heavy, light] { try await task.value }
        XCTAssertEqual(holds.order.last, "heavy")
    }

    func testWithoutALedgerThePoolServesInTurnAndUncapped() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 2, logger: logger)
        defer { pool.shutdown() }
        let holds = Holds()
        let jobs = [
            holds.job("a1", on: pool, as: "address:10.0.0.1"), holds.job("a2", on: pool, as: "address:10.0.0.1"),
        ]
        try await waitFor("both jobs of one client to run") { holds.order.count == 2 }
        for name in ["a1", "a2"] { holds.release(name) }
        for task in jobs { try await task.value }
    }

    func testTheLedgerForgetsIdleClientsOnceTheyAreMany() async throws {
        let ledger = DatabaseTimeLedger(window: .milliseconds(1))
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 2, ledger: ledger, logger: logger)
        defer { pool.shutdown() }
        for index in 0..<2100 {
            try await PGPool.$chargedClient.withValue("address:10.1.\(index / 256).\(index % 256)") {
                _ = try await pool.read("SELECT 1")
            }
        }
        XCTAssertLessThan(ledger.clientCount, 2100, "decayed entries are swept")
    }
}
