import AuthJWT
import Foundation
import PGClient

/// The optional TOTP second factor: enrolled from the console, then asked at every sign-in.
public struct OwnerSecondFactor: Sendable {
    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Enrols `secret` for the session's owner when `code` proves the authenticator app holds it.
    /// - Returns: false (nothing stored) when the code is wrong.
    /// - Throws: `Failure.conflict` when the owner has one already (it is never replaced from a session alone).
    public func enrol(_ session: OwnerSession, secret: [UInt8], code: String, now: Date = Date()) async throws -> Bool {
        guard secret.count == TOTP.secretByteCount,
            let step = TOTP(secret: secret).matchingStep(code, at: now)
        else { return false }
        try await pool.withTransaction { connection in
            guard
                try connection.query(
                    """
                    UPDATE console_owners SET totp_secret = \(secret), totp_last_step = \(step)
                    WHERE id = \(session.ownerID) AND totp_secret IS NULL
                    """
                ).affectedRows == 1
            else { throw Failure.conflict("A second factor is enrolled already; nothing was changed.") }
            try AuditLog.record(
                session.actor, action: "owner.second_factor_enrolled", target: session.email,
                connection)
        }
        return true
    }

    /// Whether `code` is the owner's current code, not used before (its step is then remembered, so a code
    /// overheard cannot be replayed). Inside the caller's transaction.
    static func accept(_ code: String, secret: [UInt8], ownerID: UUID, at date: Date, _ connection: PGConnection)
        throws -> Bool
    {
        guard let step = TOTP(secret: secret).matchingStep(code, at: date) else { return false }
        return try connection.query(
            """
            UPDATE console_owners SET totp_last_step = \(step)
            WHERE id = \(ownerID) AND (totp_last_step IS NULL OR totp_last_step < \(step))
            """
        ).affectedRows == 1
    }
}
