import Foundation
import PGClient

/// Throttles failed logins and reset requests with counters kept in PostgreSQL (`auth_events`), so every
/// server instance enforces the same limits.
public struct RateLimiter: Sendable {
    public struct Rule: Sendable {
        public let kind: String
        public let limit: Int
        public let window: Int  // seconds
    }

    /// More than 10 failed logins for one email within 15 minutes.
    public static let failedLoginsPerEmail = Rule(kind: "login_failed", limit: 10, window: 900)
    /// More than 100 failed logins from one client address within 15 minutes.
    public static let failedLoginsPerAddress = Rule(kind: "login_failed", limit: 100, window: 900)
    /// More than 3 password-reset requests for one email within an hour, whether or not it has an account (so the
    /// refusal tells nothing about which accounts exist), through either door.
    public static let resetsPerEmail = Rule(kind: "reset_requested", limit: 3, window: 3600)
    /// More than 10 password-reset requests from one client address within an hour, whatever emails they name.
    public static let resetsPerAddress = Rule(kind: "reset_requested", limit: 10, window: 3600)
    /// More than 30 sign-ups (each a password hash) from one client address within 10 minutes.
    public static let signUpsPerAddress = Rule(kind: "signup", limit: 30, window: 600)
    /// More than 20 failed password-reset confirmations from one client address within 15 minutes.
    public static let failedResetConfirmationsPerAddress = Rule(kind: "reset_confirm_failed", limit: 20, window: 900)

    public let enabled: Bool
    /// Keys refused recently, and until when: a flood past a limit is answered from memory, without a database
    /// transaction per request (the database stays the authority; this only remembers its answer).
    private let refusals = RecentRefusals()

    public init(enabled: Bool) { self.enabled = enabled }

    /// Throws `rateLimited` when `kind` was refused for `email` or `address` moments ago and the refusal still holds.
    func refuseIfRecentlyLimited(_ kind: String, email: String? = nil, address: String? = nil) throws {
        guard enabled else { return }
        for key in Self.keys(kind, email: email, address: address) {
            if let seconds = refusals.remaining(key) { throw QuoteVaultError.rateLimited(retryAfterSeconds: seconds) }
        }
    }

    private static func keys(_ kind: String, email: String?, address: String?) -> [String] {
        [email.map { "\(kind):email:\($0)" }, address.map { "\(kind):address:\($0)" }].compactMap { $0 }
    }

    /// Takes one attempt of `kind` for `email` and `address` atomically, before the expensive work: under
    /// transaction-scoped advisory locks on each key (so every instance agrees), counts the recent events against
    /// `emailRule`/`addressRule` and records the attempt when both allow it. Must run inside a transaction.
    /// Concurrent attempts are thus evaluated one after the other: exactly `limit` get through.
    /// - Returns: the event's id, for `giveBack` when the attempt turns out not to count (a successful login).
    /// - Throws: `rateLimited` (nothing recorded) when a rule is used up.
    func reserve(
        _ kind: String, email: String? = nil, emailRule: Rule? = nil, address: String? = nil, addressRule: Rule? = nil,
        _ connection: PGConnection
    ) throws -> Int64 {
        if enabled {
            // Email before address, always: two attempts never wait for each other's locks crosswise.
            if let email, let emailRule {
                try refusals.check(
                    "\(kind):email:\(email)", namespace: "auth", limit: emailRule.limit, window: emailRule.window,
                    attempts: "auth_events WHERE kind = \(emailRule.kind) AND email = \(email)", connection)
            }
            if let address, let addressRule {
                try refusals.check(
                    "\(kind):address:\(address)", namespace: "auth", limit: addressRule.limit,
                    window: addressRule.window,
                    attempts: "auth_events WHERE kind = \(addressRule.kind) AND client_address = \(address)", connection
                )
            }
        }
        let rows = try connection.query(
            """
            INSERT INTO auth_events (kind, email, client_address) VALUES (\(kind), \(email), \(address)) RETURNING id
            """)
        return try rows[rows.startIndex].decode("id", as: Int64.self)
    }

    /// Forgets a reserved attempt that must not count (the login succeeded).
    func giveBack(_ eventID: Int64, _ connection: PGConnection) throws {
        try connection.query("DELETE FROM auth_events WHERE id = \(eventID)")
    }

    /// How long an event is kept: longer than every rule's window (`AccountHousekeeping` forgets it then).
    public static let eventRetention: Duration = .seconds(2 * 3600)
}
