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
