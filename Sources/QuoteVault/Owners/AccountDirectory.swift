import Foundation
import PGClient

/// App accounts as the console shows them: found by email, with what they hold and their sessions; the owner can
/// revoke every session or delete the account. Never reads password hashes or tokens.
public struct AccountDirectory: Sendable {
    public static let pageSize = 25

    /// One account: what the console lists and shows.
    public struct Account: Sendable, Equatable {
        public let id: UUID
        public let email: String
        /// The profile's display name, if the user set one.
        public let displayName: String?
        /// Disabled by an owner (see `AccountBan`): no sign-in, no token accepted.
        public let banned: Bool
        public let signedUpAt: Date
        /// The newest session's start (every sign-in starts one); nil when the account never signed in.
        public let lastSignInAt: Date?
        public let favorites: Int
        public let collections: Int
        /// Sessions neither revoked nor expired.
        public let activeSessions: Int
    }

    /// A live session: when it started and when its refresh token was last used.
    public struct Session: Sendable, Equatable {
        public let createdAt: Date
        public let lastUsedAt: Date
        public let expiresAt: Date
    }

    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    private static let summary = """
        SELECT u.id, u.email, u.created_at, p.display_name, coalesce(u.banned_until > now(), false) AS banned,
               (SELECT max(s.created_at) FROM sessions s WHERE s.user_id = u.id) AS last_sign_in,
               (SELECT count(*) FROM user_favorites f WHERE f.user_id = u.id)::int AS favorites,
               (SELECT count(*) FROM collections c WHERE c.user_id = u.id)::int AS collections,
               (SELECT count(*) FROM sessions s
                WHERE s.user_id = u.id AND s.revoked_at IS NULL AND s.expires_at > now())::int AS active_sessions
        FROM users u LEFT JOIN profiles p ON p.id = u.id
        """

    /// Accounts whose email contains `text` (case-insensitive, taken literally), in email order.
    /// - Returns: the page (1-based) and whether more follow.
    public func find(_ text: String, page: Int) async throws -> (accounts: [Account], hasMore: Bool) {
        var query = PGQuery(unsafeSQL: Self.summary)
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if !trimmed.isEmpty { query.append(" WHERE u.email LIKE \("%" + QuoteSearch.escapeLike(trimmed) + "%")") }
        query.append(" ORDER BY u.email LIMIT \(Self.pageSize + 1) OFFSET \(max(0, page - 1) * Self.pageSize)")
        let rows = try await pool.query(query)
        return (try rows.prefix(Self.pageSize).map(Self.account), rows.count > Self.pageSize)
    }

    public func account(_ id: UUID) async throws -> Account {
        var query = PGQuery(unsafeSQL: Self.summary)
        query.append(" WHERE u.id = \(id)")
        guard let row = try await pool.query(query).first else { throw QuoteVaultError.notFound }
        return try Self.account(row)
    }

    /// The account's live sessions, newest first.
    public func sessions(of id: UUID) async throws -> [Session] {
        try await pool.query(
            """
            SELECT created_at, refreshed_at, expires_at FROM sessions
            WHERE user_id = \(id) AND revoked_at IS NULL AND expires_at > now()
            ORDER BY created_at DESC LIMIT 100
            """
        ).map {
            Session(
                createdAt: try $0.decode("created_at"), lastUsedAt: try $0.decode("refreshed_at"),
                expiresAt: try $0.decode("expires_at"))
        }
    }

    /// Revokes every live session: their refresh tokens and access tokens are refused from now on (the server
    /// checks the session of every access token). - Returns: how many sessions were revoked.
    @discardableResult
    public func revokeSessions(of id: UUID, by actor: AuditActor) async throws -> Int {
        try await pool.withTransaction { connection in
            guard let email = try connection.query("SELECT email FROM users WHERE id = \(id)").first
            else { throw QuoteVaultError.notFound }
            let revoked = try connection.query(
                """
                UPDATE sessions SET revoked_at = now() WHERE user_id = \(id) AND revoked_at IS NULL
                """
            ).affectedRows
            try AuditLog.record(
                actor, action: "account.revoke_sessions", target: id.uuidString.lowercased(),
                before: ["email": try email.decode("email")], after: ["revoked": String(revoked)],
                connection)
            return revoked
        }
    }

    /// Deletes the account and everything it holds (favorites, collections, sessions go with it).
    public func delete(_ id: UUID, by actor: AuditActor) async throws {
        try await pool.withTransaction { connection in
            guard let email = try connection.query("DELETE FROM users WHERE id = \(id) RETURNING email").first
            else { throw QuoteVaultError.notFound }
            try AuditLog.record(
                actor, action: "account.delete", target: id.uuidString.lowercased(),
                before: ["email": try email.decode("email")], connection)
        }
    }

    private static func account(_ row: PGRow) throws -> Account {
        Account(
            id: try row.decode("id"), email: try row.decode("email"), displayName: try row.decode("display_name"),
            banned: try row.decode("banned"), signedUpAt: try row.decode("created_at"),
            lastSignInAt: try row.decode("last_sign_in"), favorites: try row.decode("favorites"),
            collections: try row.decode("collections"), activeSessions: try row.decode("active_sessions"))
    }
}
