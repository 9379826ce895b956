import Foundation
import PGClient
import Synchronization
import TestSupport
import XCTest

/// `Application.shutdown` returns only once nothing of the server still runs: work already on a connection
/// finishes, every connection is closed and the hashing threads have ended (what runs on while the process exits
/// races the libraries freeing their state at exit).
final class ApplicationShutdownTests: XCTestCase {
    func testShutdownWaitsForConnectionsToCloseAndWorkInFlightToFinish() async throws {
        let app = try await TestApp.start()
        let pool = app.pool
        // A job holding a connection when the shutdown begins (a background pass, say).
        let started = Started()
        let inFlight = Task {
            try await pool.withConnection { connection in
                started.flag.store(true, ordering: .relaxed)
                try connection.query("SELECT pg_sleep(0.5)")
                return true
            }
        }
        var waited = 0
        while !started.flag.load(ordering: .relaxed), waited < 500 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        XCTAssertTrue(started.flag.load(ordering: .relaxed), "the job holds a connection")
        await app.stop()
        XCTAssertEqual(pool.stats.open, 0, "every connection of the pool is closed")
        XCTAssertEqual(app.application.context.publicPool.stats.open, 0)
        XCTAssertTrue(app.application.context.hashing.hasEnded, "the hashing threads have ended")
        let finished = try await inFlight.value
        XCTAssertTrue(finished, "the job on a connection finished instead of being cut off")
        do {
            _ = try await pool.query("SELECT 1")
            XCTFail("a stopped pool takes no more work")
        } catch let error as PGError {
            XCTAssertEqual(error.kind, .poolShutdown)
        }
    }
}

private final class Started: Sendable {
    let flag = Atomic<Bool>(false)
}
