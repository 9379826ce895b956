import AuthJWT
import Foundation
import PGClient

/// The list of owners, kept by the `quote-server owner` commands: add (with a one-time sign-in link), list, remove.
public struct OwnerDirectory: Sendable {
    /// How long a sign-in link works.
    public static let linkLifetimeSeconds = 15 * 60

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Adds `email` as an owner when it is not one yet, and issues a new one-time sign-in token for it; the owner's
    /// earlier unused links stop working (the newest printed link is the only one out there).
    /// - Returns: the token, to be shown once (only its hash is stored).
    public func add(email raw: String) async throws -> String {
        let email = raw.trimmingCharacters(in: .whitespaces)
        guard email.count >= 3, email.count <= 254, email.contains("@"), !email.contains(where: \.isWhitespace) else {
            throw Failure.invalid("email", "must be an email address")
        }
        let token = try OpaqueToken.generate()
        try await pool.withTransaction { connection in
            let added =
                try connection.query(
                    """
                    INSERT INTO console_owners (email) VALUES (\(email))
                    ON CONFLICT (lower(email)) DO NOTHING
                    """
                ).affectedRows == 1
            try AuditLog.record(.commandLine, action: added ? "owner.add" : "owner.new_link", target: email, connection)
            try connection.query(
                """
                DELETE FROM console_sign_in_tokens
                WHERE used_at IS NULL AND owner_id = (SELECT id FROM console_owners WHERE lower(email) = lower(\(email)))
                """)
            try connection.query(
                """
                INSERT INTO console_sign_in_tokens (token_hash, owner_id, expires_at)
                SELECT \(OpaqueToken.hash(token)), id, now() + \(Self.linkLifetimeSeconds) * interval '1 second'
                FROM console_owners WHERE lower(email) = lower(\(email))
                """)
        }
        return token
    }

    public func list() async throws -> [Owner] {
        try await pool.query("SELECT \(unsafeSQL: Owner.columns) FROM console_owners o ORDER BY o.email")
            .map(Owner.init(row:))
    }

    /// Removes the owner (their sessions and links end with them; their audit rows keep the email).
    /// - Returns: false when there was no such owner.
    public func remove(email raw: String) async throws -> Bool {
        let email = raw.trimmingCharacters(in: .whitespaces)
        return try await pool.withTransaction { connection in
            let removed =
                try connection.query("DELETE FROM console_owners WHERE lower(email) = lower(\(email))")
                .affectedRows > 0
            if removed { try AuditLog.record(.commandLine, action: "owner.remove", target: email, connection) }
            return removed
        }
    }
}
