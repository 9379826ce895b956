import Foundation
import PGClient

/// Throttles console sign-in attempts as `RateLimiter` does the app's logins: each attempt is reserved as a failure
/// in PostgreSQL under an advisory lock (every instance agrees), given back when it succeeds; refusals are
/// remembered in memory for their retry time. Kept in a table of its own, apart from the app's `auth_events`.
public struct OwnerSignInThrottle: Sendable {
    struct Rule: Sendable {
        let limit: Int
        let window: Int  // seconds
    }

    /// More than 20 failed sign-ins from one client address within 15 minutes.
    static let perAddress = Rule(limit: 20, window: 900)
    /// More than 10 failed sign-ins (wrong codes) of one owner within 15 minutes.
    static let perOwner = Rule(limit: 10, window: 900)
    /// Attempts older than this count for no rule (kept past the windows for a look after an incident).
    static let forgottenAfter = 7200  // seconds
    /// How many of the oldest forgotten attempts each attempt deletes: more than it adds, so a flood that never
    /// ends in a sign-in (where `OwnerHousekeeping` prunes everything) cannot grow the table without bound.
    static let forgottenPerAttempt = 4

    public let enabled: Bool
    private let refusals = RecentRefusals()

    public init(enabled: Bool) { self.enabled = enabled }

    /// The attempts one sign-in took, and the keys whose allowance it used up (locked if it fails).
    struct Reservation: Sendable {
        let ids: [Int64]
        /// "address 192.0.2.1" or "owner", with the lock's length in seconds.
        let exhausted: [(key: String, seconds: Int)]
    }

    /// Takes one attempt for each key (inside the caller's transaction); `rateLimited` when a key is used up.
    func reserve(address: String, owner: UUID?, _ connection: PGConnection) throws -> Reservation {
        var keys: [(String, String, Rule)] = [("address:\(address)", "address \(address)", Self.perAddress)]
        if let owner { keys.append(("owner:\(owner.uuidString.lowercased())", "owner", Self.perOwner)) }
        var ids: [Int64] = []
        var exhausted: [(key: String, seconds: Int)] = []
        for (key, name, rule) in keys {
            if enabled {
                if let seconds = refusals.remaining(key) {
                    throw Failure.rateLimited(retryAfterSeconds: seconds)
                }
                // A lock is remembered for as long as it lasts: it is only ever lifted by time.
                let used = try refusals.check(
                    key, namespace: "console", limit: rule.limit, window: rule.window,
                    attempts: "console_sign_in_failures WHERE key = \(key)", rememberedFor: nil, connection)
                if used + 1 == rule.limit { exhausted.append((name, rule.window)) }
            }
            let rows = try connection.query("INSERT INTO console_sign_in_failures (key) VALUES (\(key)) RETURNING id")
            ids.append(try rows[rows.startIndex].decode("id", as: Int64.self))
        }
        try forgetOldest(connection)
        return Reservation(ids: ids, exhausted: exhausted)
    }

    /// Reads only the oldest few rows (by id, so an index walk that stops at once) and deletes those no rule counts.
    private func forgetOldest(_ connection: PGConnection) throws {
        try connection.query(
            """
            DELETE FROM console_sign_in_failures WHERE id IN (
                SELECT id FROM (
                    SELECT id, created_at FROM console_sign_in_failures
                    ORDER BY id LIMIT \(Self.forgottenPerAttempt) FOR UPDATE SKIP LOCKED
                ) AS oldest
                WHERE created_at < now() - \(Self.forgottenAfter) * interval '1 second')
            """)
    }

    /// Forgets attempts that turned out not to be failures.
    func giveBack(_ reservation: Reservation, _ connection: PGConnection) throws {
        try connection.query("DELETE FROM console_sign_in_failures WHERE id = ANY(\(reservation.ids))")
    }
}
