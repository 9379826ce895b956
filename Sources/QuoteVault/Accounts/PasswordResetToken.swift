import AuthJWT
import Foundation
import PGClient

/// A single-use password reset token (one hour), shared by `/v1`'s reset and GoTrue-style recovery.
enum PasswordResetToken {
    /// Inside the caller's transaction: takes one request of the per-email and per-address limits (atomically, so
    /// concurrent requests cannot overshoot; over either, `rateLimited` and no mail), then stores a new token for
    /// the account of `email` and answers it with the account, or nil when there is no such account.
    static func issue(
        email normalised: String, clientAddress: String?, limits: RateLimiter, _ connection: PGConnection
    ) throws -> (token: String, userID: UUID)? {
        _ = try limits.reserve(
            "reset_requested", email: normalised, emailRule: RateLimiter.resetsPerEmail,
            address: clientAddress, addressRule: RateLimiter.resetsPerAddress, connection)
        guard let row = try connection.query("SELECT id FROM users WHERE email = \(normalised)").first else {
            return nil
        }
        let userID = try row.decode("id", as: UUID.self)
        let token = try OpaqueToken.generate()
        try connection.query(
            """
            INSERT INTO password_reset_tokens (token_hash, user_id, expires_at)
            VALUES (\(OpaqueToken.hash(token)), \(userID), now() + interval '1 hour')
            """)
        return (token, userID)
    }
}
