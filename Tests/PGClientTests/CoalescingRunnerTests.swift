import Foundation
import PGClient
import Synchronization
import XCTest

/// Requests for a key that arrive while its job runs are answered by one more run, not one each; other keys do not
/// wait.
final class CoalescingRunnerTests: XCTestCase {
    /// What the jobs saw, and a gate that holds the first run of "a" until the test opens it.
    private final class Record: Sendable {
        let runs = Mutex<[String: Int]>([:])
        let gate = Mutex<Bool>(false)

        func count(_ key: String) -> Int { runs.withLock { $0[key, default: 0] } }
    }

    func testRequestsDuringARunAreAnsweredByOneMoreRun() async throws {
        let runner = CoalescingRunner<String>()
        let record = Record()
        let job: @Sendable (String) -> @Sendable () async -> Void = { key in
            {
                record.runs.withLock { $0[key, default: 0] += 1 }
                // Bounded: the gate opens within the test's own bounded waits.
                for _ in 0..<1_000 where key == "a" && !record.gate.withLock({ $0 }) {
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
        }
        runner.request("a", job("a"))
        try await eventually { record.count("a") == 1 }
        for _ in 0..<5 { runner.request("a", job("a")) }
        XCTAssertTrue(runner.isBusy("a"))
        // Another key runs beside it.
        runner.request("b", job("b"))
        try await eventually { record.count("b") == 1 && !runner.isBusy("b") }
        XCTAssertEqual(record.count("a"), 1, "the first run of a still holds")

        record.gate.withLock { $0 = true }
        try await eventually { !runner.isBusy("a") }
        XCTAssertEqual(record.count("a"), 2, "five requests during the run: one more run")

        // Idle again: the next request runs at once.
        runner.request("a", job("a"))
        try await eventually { !runner.isBusy("a") }
        XCTAssertEqual(record.count("a"), 3)
    }

    private func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<1_000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTFail("the condition did not hold within 10 s")
    }
}
