import AuthJWT
import Foundation
import PGClient

/// Console sessions: an opaque token in a cookie, kept by hash; each ends after `idleSeconds` without a request or
/// `absoluteSeconds` after sign-in, whichever comes first, or at sign-out.
public struct OwnerSessions: Sendable {
    public static let idleSeconds = 30 * 60
    public static let absoluteSeconds = 12 * 60 * 60

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Opens a session for `ownerID` inside the caller's transaction. - Returns: the cookie's token.
    static func open(ownerID: UUID, _ connection: PGConnection) throws -> String {
        let token = try OpaqueToken.generate()
        try connection.query(
            """
            INSERT INTO console_sessions (owner_id, token_hash, expires_at)
            VALUES (\(ownerID), \(OpaqueToken.hash(token)), now() + \(absoluteSeconds) * interval '1 second')
            """)
        return token
    }

    /// Ends the session of `token`, if it is live, inside the caller's transaction (the browser signs in anew).
    static func end(token: String, _ connection: PGConnection) throws {
        guard OpaqueToken.isWellFormed(token) else { return }
        try connection.query(
            """
            UPDATE console_sessions SET revoked_at = now()
            WHERE token_hash = \(OpaqueToken.hash(token)) AND revoked_at IS NULL
            """)
    }

    /// The live session of `token` (its idle clock restarted), or nil when it is unknown, ended or expired.
    public func resume(_ token: String) async throws -> OwnerSession? {
        guard OpaqueToken.isWellFormed(token) else { return nil }
        let rows = try await pool.query(
            """
            UPDATE console_sessions s SET last_seen_at = now()
            FROM console_owners o
            WHERE s.token_hash = \(OpaqueToken.hash(token)) AND o.id = s.owner_id AND s.revoked_at IS NULL
              AND s.expires_at > now() AND s.last_seen_at > now() - \(Self.idleSeconds) * interval '1 second'
            RETURNING s.id AS session_id, o.id AS owner_id, o.email, o.totp_secret IS NOT NULL AS has_second_factor
            """)
        guard let row = rows.first else { return nil }
        return OwnerSession(
            id: try row.decode("session_id"), ownerID: try row.decode("owner_id"), email: try row.decode("email"),
            hasSecondFactor: try row.decode("has_second_factor"), token: token)
    }

    /// One of an owner's live sessions, as the Security page lists them.
    public struct Live: Sendable, Equatable {
        public let id: UUID
        public let createdAt: Date
        public let lastSeenAt: Date
    }

    /// The owner's live sessions, newest first.
    public func live(of ownerID: UUID) async throws -> [Live] {
        try await pool.query(
            """
            SELECT id, created_at, last_seen_at FROM console_sessions
            WHERE owner_id = \(ownerID) AND revoked_at IS NULL AND expires_at > now()
              AND last_seen_at > now() - \(Self.idleSeconds) * interval '1 second'
            ORDER BY created_at DESC LIMIT 100
            """
        ).map {
            Live(
                id: try $0.decode("id"), createdAt: try $0.decode("created_at"),
                lastSeenAt: try $0.decode("last_seen_at"))
        }
    }

    /// Ends the owner's other sessions: the one `id`, or all but `session` when nil; never another owner's.
    /// - Returns: how many ended.
    @discardableResult
    public func endOthers(of session: OwnerSession, id: UUID? = nil) async throws -> Int {
        try await pool.withTransaction { connection in
            var query: PGQuery = """
                UPDATE console_sessions SET revoked_at = now()
                WHERE owner_id = \(session.ownerID) AND id <> \(session.id) AND revoked_at IS NULL
                """
            if let id { query.append(" AND id = \(id)") }
            let ended = try connection.query(query).affectedRows
            try AuditLog.record(
                session.actor, action: "owner.end_sessions", target: session.email, after: ["ended": String(ended)],
                connection)
            return ended
        }
    }

    /// Ends the session (sign-out), with its audit row.
    public func end(_ session: OwnerSession) async throws {
        try await pool.withTransaction { connection in
            try connection.query("UPDATE console_sessions SET revoked_at = now() WHERE id = \(session.id)")
            try AuditLog.record(session.actor, action: "owner.sign_out", target: session.email, connection)
        }
    }
}
