@testable import QuoteAPI
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
