import Foundation
import PGClient

/// Disabling (banning) an account and enabling it again, as GoTrue's `banned_until`; `AccountBan` is the rule the
/// doors apply.
extension AccountDirectory {
    /// Disables the account until an owner enables it: every session ends now, sign-in is refused.
    /// - Returns: how many sessions were ended.
    @discardableResult
    public func ban(_ id: UUID, by actor: AuditActor) async throws -> Int {
        try await pool.withTransaction { connection in
            guard
                let row = try connection.query(
                    "UPDATE users SET banned_until = 'infinity' WHERE id = \(id) RETURNING email"
                ).first
            else { throw QuoteVaultError.notFound }
            let ended = try connection.query(
                "UPDATE sessions SET revoked_at = now() WHERE user_id = \(id) AND revoked_at IS NULL"
            ).affectedRows
            try AuditLog.record(
                actor, action: "account.ban", target: id.uuidString.lowercased(),
                before: ["email": try row.decode("email")], after: ["banned": "true", "revoked": String(ended)],
                connection)
            return ended
        }
    }

    /// Enables a disabled account: the user may sign in again (the ended sessions stay ended).
    public func enable(_ id: UUID, by actor: AuditActor) async throws {
        try await pool.withTransaction { connection in
            guard
                let row = try connection.query(
                    "UPDATE users SET banned_until = NULL WHERE id = \(id) RETURNING email"
                ).first
            else { throw QuoteVaultError.notFound }
            try AuditLog.record(
                actor, action: "account.enable", target: id.uuidString.lowercased(),
                before: ["email": try row.decode("email"), "banned": "true"], after: ["banned": "false"],
                connection)
        }
    }
}
