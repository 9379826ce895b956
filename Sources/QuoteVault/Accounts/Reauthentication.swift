import AuthJWT
import Foundation
import PGClient

/// Why a password change was refused for want of re-authentication.
public enum ReauthenticationError: Error, Sendable, Equatable {
    /// The session is older than `Reauthentication.sessionAge` and no nonce came with the change.
    case needed
    /// The nonce is wrong, expired, spent, or was guessed wrong too often.
    case notValid
    /// A nonce was mailed less than `Reauthentication.resendInterval` ago.
    case tooSoon(retryAfterSeconds: Int)
}

/// GoTrue's secure password change: a session older than a day changes the password only with the 6-digit nonce
/// mailed to the account (`GET /auth/v1/reauthenticate`). A stolen long-lived session then cannot lock the owner
/// out; a fresh session (a login, or the reset link's recovery session) changes it directly.
public struct Reauthentication: Sendable {
    public static let sessionAge = 24 * 3600
    /// Seconds a nonce stays valid, between two mails, and wrong guesses before it is void.
    public static let nonceLifetime = 600
    public static let resendInterval = 60
    public static let attempts = 5

    let pool: PGPool

    /// Mails a new nonce to the user's address, replacing any earlier one.
    public func send(to user: AuthenticatedUser) async throws {
        let nonce = try Self.generate()
        let hash = Self.hash(nonce, user.userID)
        let resend = Self.resendInterval
        try await pool.withTransaction { connection in
            guard
                let email = try connection.query("SELECT email FROM users WHERE id = \(user.userID)").first?
                    .decode("email", as: String.self)
            else { throw QuoteVaultError.unauthorized }
            let written = try connection.query(
                """
                INSERT INTO reauthentication_nonces AS n (user_id, nonce_hash) VALUES (\(user.userID), \(hash))
                ON CONFLICT (user_id) DO UPDATE SET nonce_hash = EXCLUDED.nonce_hash, sent_at = now(), failures = 0
                WHERE n.sent_at <= now() - make_interval(secs => \(resend))
                """)
            guard written.affectedRows == 1 else { throw ReauthenticationError.tooSoon(retryAfterSeconds: resend) }
            try MailOutbox.enqueue(
                to: email, subject: "Confirm your QuoteVault password change",
                body: """
                    Enter this code within ten minutes to confirm your new QuoteVault password:
                    \(nonce)

                    If you did not ask for it, someone may be using your account: sign in and change your password.
                    """,
                connection)
        }
    }

    /// Throws `.needed` when the user's session is older than `sessionAge` and `nonce` is nil, `.notValid` when
    /// it is wrong (counted: `attempts` wrong guesses void it); nothing is spent. Call before hashing the password.
    public func check(_ nonce: String?, for user: AuthenticatedUser) async throws {
        guard try await needsNonce(user) else { return }
        guard let nonce else { throw ReauthenticationError.needed }
        let hash = Self.hash(nonce, user.userID)
        let (lifetime, attempts) = (Self.nonceLifetime, Self.attempts)
        try await pool.withTransaction { connection in
            guard
                let row = try connection.query(
                    """
                    SELECT nonce_hash = \(hash) AS matches FROM reauthentication_nonces
                    WHERE user_id = \(user.userID) AND sent_at > now() - make_interval(secs => \(lifetime))
                      AND failures < \(attempts) FOR UPDATE
                    """
                ).first
            else { throw ReauthenticationError.notValid }
            guard try row.decode("matches", as: Bool.self) else {
                try connection.query(
                    "UPDATE reauthentication_nonces SET failures = failures + 1 WHERE user_id = \(user.userID)")
                throw PGCommitThenThrow(ReauthenticationError.notValid)
            }
        }
    }

    /// Spends the nonce `check` accepted, in the password change's transaction (a second change needs a new one).
    public static func spend(_ nonce: String?, for user: AuthenticatedUser, _ connection: PGConnection) throws {
        guard let nonce else { return }
        try connection.query(
            """
            DELETE FROM reauthentication_nonces
            WHERE user_id = \(user.userID) AND nonce_hash = \(hash(nonce, user.userID))
            """)
    }

    private func needsNonce(_ user: AuthenticatedUser) async throws -> Bool {
        let age = Self.sessionAge
        return try await pool.query(
            """
            SELECT created_at <= now() - make_interval(secs => \(age)) AS old FROM sessions WHERE id = \(user.sessionID)
            """
        ).first?.decode("old", as: Bool.self) ?? true
    }

    /// Six decimal digits, as GoTrue mails them (rejection sampling keeps them uniform).
    private static func generate() throws -> String {
        while true {
            let bytes = try SecureRandom.bytes(count: 4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard value < 4_294_000_000 else { continue }
            return String(format: "%06u", value % 1_000_000)
        }
    }

    private static func hash(_ nonce: String, _ userID: UUID) -> String {
        Digest.sha256Hex(Array("\(userID.uuidString):\(nonce)".utf8))
    }
}
