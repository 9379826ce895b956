import AuthJWT
import Foundation
import PGClient

/// The optional TOTP second factor: enrolled from the console, then asked at every sign-in.
public struct OwnerSecondFactor: Sendable {
    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Why an enrolment stored nothing.
    public enum Refusal: Error, Sendable, Equatable {
        /// The new secret's code does not match.
        case wrongCode
        /// Replacing: the code of the authenticator enrolled now does not match.
        case wrongCurrentCode
    }

    /// Enrols `secret` for the session's owner when `code` proves the authenticator app holds it.
    /// - Parameter currentCode: to replace an enrolled second factor (a reset with a fresh enrolment), a code of the
    ///   one enrolled now: a session alone never replaces it. Until the new one is proven the old one stays.
    /// - Throws: `Refusal` (nothing stored); `Failure.conflict` when the owner has one already and `currentCode`
    ///   is nil.
    public func enrol(
        _ session: OwnerSession, secret: [UInt8], code: String, currentCode: String? = nil, now: Date = Date()
    ) async throws {
        guard secret.count == TOTP.secretByteCount,
            let step = TOTP(secret: secret).matchingStep(code, at: now)
        else { throw Refusal.wrongCode }
        let replacing = currentCode != nil
        try await pool.withTransaction { connection in
            let stored = try connection.query(
                "SELECT totp_secret FROM console_owners WHERE id = \(session.ownerID) FOR UPDATE"
            ).first?.decode("totp_secret", as: [UInt8]?.self)
            if let currentCode {
                guard let stored,
                    try Self.accept(currentCode, secret: stored, ownerID: session.ownerID, at: now, connection)
                else { throw Refusal.wrongCurrentCode }
            } else if stored != nil {
                throw Failure.conflict("A second factor is enrolled already; nothing was changed.")
            }
            try connection.query(
                """
                UPDATE console_owners SET totp_secret = \(secret), totp_last_step = \(step)
                WHERE id = \(session.ownerID)
                """)
            try AuditLog.record(
                session.actor, action: replacing ? "owner.second_factor_replaced" : "owner.second_factor_enrolled",
                target: session.email, connection)
        }
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
