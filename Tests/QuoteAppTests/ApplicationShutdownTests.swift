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
        let context = app.application.context
        XCTAssertTrue(context.mail.hasEnded && context.sync.maintenance.hasEnded && context.housekeeping.hasEnded)
        let finished = try await inFlight.value
        XCTAssertTrue(finished, "the job on a connection finished instead of being cut off")
        do {
            _ = try await pool.query("SELECT 1")
            XCTFail("a stopped pool takes no more work")
        } catch let error as PGError {
            XCTAssertEqual(error.kind, .poolShutdown)
        }
    }

    func testAPassStuckOnAnSMTPServerThatNeverAnswersDoesNotHoldTheStopForever() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let app = try await TestApp.start { $0.smtpURL = "smtp://127.0.0.1:\(silent.port)" }
        let user = try await app.makeUser()
        let reset = try app.client.send("POST", "/v1/auth/password-reset", json: ["email": user.email])
        XCTAssertEqual(reset.status, 202)
        // The delivery loop takes the mail and waits for a greeting that never comes, inside its transaction.
        var stuck = 0
        for _ in 0..<500 where stuck == 0 {
            try await Task.sleep(for: .milliseconds(10))
            stuck = try await app.withConnection { connection in
                let rows = try connection.query(
                    """
                    SELECT count(*)::int8 AS stuck FROM pg_stat_activity \
                    WHERE datname = current_database() AND state = 'idle in transaction'
                    """)
                return try rows[rows.startIndex].decode("stuck", as: Int.self)
            }
        }
        XCTAssertEqual(stuck, 1, "the delivery pass is in flight")
        await app.stop()
        XCTAssertFalse(app.application.context.mail.hasEnded, "the stuck pass was left, not waited for")
        let context = app.application.context
        XCTAssertTrue(context.sync.maintenance.hasEnded && context.housekeeping.hasEnded)
    }
}

private final class Started: Sendable {
    let flag = Atomic<Bool>(false)
}
