@testable import QuoteApp
import QuoteVault
import XCTest

/// The per-address cap on concurrent searches: at the limit and past it.
final class ConcurrencyGateTests: XCTestCase {
    func testOneAddressRunsAtMostItsLimitAtOnce() async throws {
        let gate = ConcurrencyGate(perAddress: 2)
        // Two runs that hold the gate until released (each waits on a stream of its own).
        let releases = [AsyncStream<Void>.makeStream(), AsyncStream<Void>.makeStream()]
        let started = AsyncStream<Void>.makeStream()
        let holders = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for release in releases {
                    group.addTask {
                        try await gate.run(for: "10.0.0.1") {
                            started.continuation.yield()
                            for await _ in release.stream { break }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        _ = await iterator.next()
        _ = await iterator.next()
        // At the limit: a third from the same address is refused; another address is not.
        do {
            try await gate.run(for: "10.0.0.1") {}
            XCTFail("a third concurrent run should be refused")
        } catch QuoteVaultError.rateLimited(let seconds) {
            XCTAssertEqual(seconds, 1)
        }
        try await gate.run(for: "10.0.0.2") {}
        for release in releases { release.continuation.finish() }
        try await holders.value
        try await gate.run(for: "10.0.0.1") {}
    }
}

/// The global cap: a request past it waits for a place within its bound, and is refused past the bound.
final class ConcurrencyGateGlobalCapTests: XCTestCase {
    func testARequestPastTheGlobalCapGetsAPlaceFreedWithinItsWait() async throws {
        let gate = ConcurrencyGate(perAddress: 2, global: 1)
        XCTAssertNil(gate.enter("10.0.0.1"))
        XCTAssertEqual(
            gate.enter("10.0.0.2").map(String.init(describing:)),
            String(describing: QuoteVaultError.busy(retryAfterSeconds: 1)))
        // Another address waits for the one place; it is given back while it waits.
        let waiter = Task { await gate.enter("10.0.0.2", waitingUpTo: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(20))
        gate.leave("10.0.0.1")
        let refusal = await waiter.value
        XCTAssertNil(refusal, "admitted once the place was free")
        // The place is now the waiter's: a request that waits less than it holds the place is refused.
        let late = await gate.enter("10.0.0.3", waitingUpTo: .milliseconds(30))
        XCTAssertEqual(
            late.map(String.init(describing:)),
            String(describing: QuoteVaultError.busy(retryAfterSeconds: 1)))
        gate.leave("10.0.0.2")
        XCTAssertNil(gate.enter("10.0.0.3"))
    }
}

/// A place given back goes to the fairest waiter: fewest running from its address, then least database time.
final class ConcurrencyGateFairOrderTests: XCTestCase {
    /// Starts a waiter and waits (bounded) until the gate holds it.
    private func waiter(
        _ gate: ConcurrencyGate, _ address: String, use: Double = 0, admitted: AsyncStream<String>.Continuation
    ) -> Task<QuoteVaultError?, Never> {
        Task {
            let refusal = await gate.enter(address, use: use, waitingUpTo: .seconds(30))
            if refusal == nil { admitted.yield(address) }
            return refusal
        }
    }

    private func settle() async throws { try await Task.sleep(for: .milliseconds(50)) }

    func testAnAddressWithNothingRunningGoesBeforeTheSecondOfAnAddressThatHasOne() async throws {
        let gate = ConcurrencyGate(perAddress: 2, global: 2)
        XCTAssertNil(gate.enter("10.0.0.1"))
        XCTAssertNil(gate.enter("10.0.0.9"))
        let (order, admitted) = AsyncStream<String>.makeStream()
        // The address that runs one asks first for a second place; another address asks after it.
        let second = waiter(gate, "10.0.0.1", admitted: admitted)
        try await settle()
        let other = waiter(gate, "10.0.0.2", admitted: admitted)
        try await settle()
        gate.leave("10.0.0.9")
        var iterator = order.makeAsyncIterator()
        let firstAdmitted = await iterator.next()
        XCTAssertEqual(firstAdmitted, "10.0.0.2", "the address with nothing running goes first")
        gate.leave("10.0.0.2")
        let secondAdmitted = await iterator.next()
        XCTAssertEqual(secondAdmitted, "10.0.0.1")
        gate.leave("10.0.0.1")
        gate.leave("10.0.0.1")
        _ = await (second.value, other.value)
        XCTAssertNil(gate.enter("10.0.0.3"))
        XCTAssertNil(gate.enter("10.0.0.4"))
    }

    func testAmongEqualsTheClientWithLessRecentDatabaseTimeGoesFirst() async throws {
        let gate = ConcurrencyGate(perAddress: 2, global: 1)
        XCTAssertNil(gate.enter("10.0.0.9"))
        let (order, admitted) = AsyncStream<String>.makeStream()
        let heavy = waiter(gate, "10.0.0.1", use: 4.0, admitted: admitted)
        try await settle()
        let light = waiter(gate, "10.0.0.2", use: 0.01, admitted: admitted)
        try await settle()
        gate.leave("10.0.0.9")
        var iterator = order.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first, "10.0.0.2")
        gate.leave("10.0.0.2")
        let second = await iterator.next()
        XCTAssertEqual(second, "10.0.0.1")
        gate.leave("10.0.0.1")
        _ = await (heavy.value, light.value)
    }

    func testWaitingCountsAgainstTheAddressCap() async throws {
        let gate = ConcurrencyGate(perAddress: 2, global: 1)
        XCTAssertNil(gate.enter("10.0.0.9"))
        let (_, admitted) = AsyncStream<String>.makeStream()
        // At the edge: two of one address waiting.
        let waiting = [waiter(gate, "10.0.0.1", admitted: admitted), waiter(gate, "10.0.0.1", admitted: admitted)]
        try await settle()
        // Past it: a third is refused at once with 429, not queued.
        let third = await gate.enter("10.0.0.1", waitingUpTo: .seconds(30))
        XCTAssertEqual(
            third.map(String.init(describing:)), String(describing: QuoteVaultError.rateLimited(retryAfterSeconds: 1)))
        gate.leave("10.0.0.9")
        let firstRefusal = await waiting[0].value
        XCTAssertNil(firstRefusal)
        gate.leave("10.0.0.1")
        let secondRefusal = await waiting[1].value
        XCTAssertNil(secondRefusal)
        gate.leave("10.0.0.1")
    }

    func testAWaiterIsRefusedWhenItsWaitEnds() async throws {
        let gate = ConcurrencyGate(perAddress: 2, global: 1)
        XCTAssertNil(gate.enter("10.0.0.9"))
        let refusal = await gate.enter("10.0.0.1", waitingUpTo: .milliseconds(30))
        XCTAssertEqual(
            refusal.map(String.init(describing:)), String(describing: QuoteVaultError.busy(retryAfterSeconds: 1)))
        gate.leave("10.0.0.9")
        XCTAssertNil(gate.enter("10.0.0.1"), "the refused waiter left no trace")
    }
}

/// An address that held places recently waits behind one that did not.
final class ConcurrencyGatePlaceTimeTests: XCTestCase {
    func testAnAddressThatSearchesNowAndThenGoesBeforeOneThatSearchesAllTheTime() async throws {
        let gate = ConcurrencyGate(perAddress: 2, global: 1)
        // 10.0.0.1 held the one place for a while.
        XCTAssertNil(gate.enter("10.0.0.1"))
        try await Task.sleep(for: .milliseconds(200))
        gate.leave("10.0.0.1")
        XCTAssertNil(gate.enter("10.0.0.9"))
        let (order, admitted) = AsyncStream<String>.makeStream()
        // It asks first, with less database time than the other; the other asks after it.
        let frequent = Task {
            let refusal = await gate.enter("10.0.0.1", use: 0, waitingUpTo: .seconds(30))
            if refusal == nil { admitted.yield("10.0.0.1") }
        }
        try await Task.sleep(for: .milliseconds(50))
        let rare = Task {
            let refusal = await gate.enter("10.0.0.2", use: 1, waitingUpTo: .seconds(30))
            if refusal == nil { admitted.yield("10.0.0.2") }
        }
        try await Task.sleep(for: .milliseconds(50))
        gate.leave("10.0.0.9")
        var iterator = order.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first, "10.0.0.2", "the address that held no place goes first")
        gate.leave("10.0.0.2")
        let second = await iterator.next()
        XCTAssertEqual(second, "10.0.0.1")
        gate.leave("10.0.0.1")
        _ = await (frequent.value, rare.value)
    }
}
