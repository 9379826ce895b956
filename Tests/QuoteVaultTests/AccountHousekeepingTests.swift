import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// What the accounts' tables keep only for a while goes by itself (`AccountHousekeeping`): old throttle events,
/// sessions a day after they ended, reset links a day after they expired, mail a day after it was written; what
/// is still due stays, and a live session keeps working.
final class AccountHousekeepingTests: XCTestCase {
    private func count(_ app: TestApp, _ sql: PGQuery) async throws -> Int {
        try await app.withConnection { try $0.query(sql)[0].decode(at: 0, as: Int.self) }
    }

    private func signUp(_ app: TestApp, _ email: String) throws -> [String: Any] {
        let response = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": email, "password": "correct horse"])
        XCTAssertEqual(response.status, 201)
        return try response.jsonObject()
    }

    private func refresh(_ app: TestApp, _ token: String) throws -> HTTPTestResponse {
        try app.client.send("POST", "/v1/auth/refresh", json: ["refresh_token": token])
    }

    func testWhatIsPastItsTimeGoesAndWhatIsDueStays() async throws {
        let app = try await startTestApp()
        let live = try signUp(app, "live@x.io")
        let ended = try signUp(app, "ended@x.io")
        let endedUser = try XCTUnwrap((ended["user"] as? [String: Any])?["id"] as? String)
        for _ in 0..<3 {
            let wrong = try app.client.send(
                "POST", "/v1/auth/login", json: ["email": "live@x.io", "password": "wrong horse"])
            XCTAssertEqual(wrong.status, 401)
        }
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "ended@x.io"]).status, 202)
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "live@x.io"]).status, 202)

        // Age one of each: two failed logins past every window, the second user's session ended two days ago,
        // their reset link and its mail two days old.
        try await app.withConnection { connection in
            try connection.query(
                """
                UPDATE auth_events SET created_at = now() - interval '3 hours'
                WHERE id IN (SELECT id FROM auth_events ORDER BY id LIMIT 2)
                """)
            try connection.query(
                "UPDATE sessions SET revoked_at = now() - interval '2 days' WHERE user_id = \(endedUser)::uuid")
            try connection.query(
                """
                UPDATE password_reset_tokens SET expires_at = now() - interval '2 days'
                WHERE user_id = \(endedUser)::uuid
                """)
            try connection.query(
                """
                UPDATE mail_outbox SET created_at = now() - interval '2 days'
                WHERE id = (SELECT min(id) FROM mail_outbox)
                """)
        }
        let eventsBefore = try await count(app, "SELECT count(*)::int8 FROM auth_events")
        XCTAssertGreaterThanOrEqual(eventsBefore, 3)
        let mailBefore = try await count(app, "SELECT count(*)::int8 FROM mail_outbox")
        XCTAssertEqual(mailBefore, 2)

        let deleted = try await app.application.context.housekeeping.pruneOnce()
        XCTAssertEqual(deleted, 2 + 1 + 1 + 1, "two events, one session, one reset link, one mail")
        let events = try await count(app, "SELECT count(*)::int8 FROM auth_events")
        XCTAssertEqual(events, eventsBefore - 2)
        let oldEvents = try await count(
            app, "SELECT count(*)::int8 FROM auth_events WHERE created_at < now() - interval '1 hour'")
        XCTAssertEqual(oldEvents, 0)
        let endedSessions = try await count(
            app, "SELECT count(*)::int8 FROM sessions WHERE user_id = \(endedUser)::uuid")
        XCTAssertEqual(endedSessions, 0)
        let orphanTokens = try await count(
            app,
            "SELECT count(*)::int8 FROM refresh_tokens t WHERE NOT EXISTS (SELECT FROM sessions s WHERE s.id = t.session_id)"
        )
        XCTAssertEqual(orphanTokens, 0, "no token outlives its session")
        let endedLinks = try await count(
            app, "SELECT count(*)::int8 FROM password_reset_tokens WHERE user_id = \(endedUser)::uuid")
        XCTAssertEqual(endedLinks, 0)
        let links = try await count(app, "SELECT count(*)::int8 FROM password_reset_tokens")
        XCTAssertEqual(links, 1)
        let mail = try await count(app, "SELECT count(*)::int8 FROM mail_outbox")
        XCTAssertEqual(mail, 1)

        // The live session still refreshes; the ended one is unknown, as a revoked one was.
        XCTAssertEqual(try refresh(app, live["refresh_token"] as! String).status, 200)
        XCTAssertEqual(try refresh(app, ended["refresh_token"] as! String).status, 401)

        let again = try await app.application.context.housekeeping.pruneOnce()
        XCTAssertEqual(again, 0, "nothing else was due")
    }

    func testAPassDeletesAtMostItsBatchOfEach() async throws {
        let app = try await startTestApp()
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO auth_events (kind, email, created_at)
                SELECT 'login_failed', 'x@y.io', now() - interval '3 hours' FROM generate_series(1, 5)
                """)
        }
        let housekeeping = app.application.context.housekeeping
        var passes: [Int] = []
        for _ in 0..<10 {
            let deleted = try await housekeeping.pruneOnce(batchSize: 2)
            passes.append(deleted)
            if deleted == 0 { break }
        }
        XCTAssertEqual(passes, [2, 2, 1, 0])
        let left = try await count(app, "SELECT count(*)::int8 FROM auth_events")
        XCTAssertEqual(left, 0)
    }

    /// The sessions and reset links due are found by their indexes (0050), not by reading the whole table: the
    /// index expressions must match the pass's statements exactly for the planner to use them.
    func testDueSessionsAndLinksAreFoundByTheirIndexes() async throws {
        let app = try await startTestApp()
        let plans = try await app.withConnection { connection in
            try connection.transaction { connection in
                try connection.query("SET LOCAL enable_seqscan = off")
                let sessions = try connection.query(
                    """
                    EXPLAIN SELECT id FROM sessions
                    WHERE least(expires_at, coalesce(revoked_at, 'infinity'::timestamptz)) < now() LIMIT 10
                    """)
                let links = try connection.query(
                    "EXPLAIN SELECT token_hash FROM password_reset_tokens WHERE expires_at < now() LIMIT 10")
                return try [sessions, links].map { rows in
                    try rows.map { try $0.decode(at: 0, as: String.self) }.joined(separator: "\n")
                }
            }
        }
        XCTAssertTrue(plans[0].contains("sessions_ended_idx"), plans[0])
        XCTAssertTrue(plans[1].contains("password_reset_tokens_expires_idx"), plans[1])
    }

    func testEventsAreKeptLongerThanEveryThrottleWindow() {
        let rules: [RateLimiter.Rule] = [
            RateLimiter.failedLoginsPerEmail, RateLimiter.failedLoginsPerAddress, RateLimiter.resetsPerEmail,
            RateLimiter.resetsPerAddress, RateLimiter.signUpsPerAddress, RateLimiter.failedResetConfirmationsPerAddress,
        ]
        for rule in rules {
            XCTAssertGreaterThan(Int(RateLimiter.eventRetention.components.seconds), rule.window, rule.kind)
        }
    }
}
