import AuthJWT
import Foundation
import PGClient

/// Why a step of GoTrue-style password recovery was refused (beyond an invalid reset token).
public enum RecoveryError: Error, Sendable, Equatable {
    /// No flow for this authorization code, or its code was already exchanged.
    case flowStateNotFound
    /// The authorization code is older than `PasswordRecovery.codeLifetime`.
    case flowStateExpired
    /// SHA-256 of the verifier is not the challenge the flow was started with.
    case badCodeVerifier
    /// The new password is the current one.
    case samePassword
}

/// Password recovery as Supabase clients finish it (GoTrue): the mail's link is verified by the server, which
/// answers a one-use, short-lived authorization code when the client started a PKCE flow (exchanged for a session
/// with the code verifier), or a session otherwise; a signed-in user then sets a new password. The reset tokens are
/// the same as `/v1`'s (one use, one hour).
public struct PasswordRecovery: Sendable {
    /// How long an authorization code may be exchanged, in seconds.
    public static let codeLifetime = 300

    let pool: PGPool
    let hashing: PasswordHashingQueue
    let sessions: SessionIssuer
    let limits: RateLimiter

    /// A PKCE code challenge: base64url of SHA-256, 43 to 128 unreserved characters (RFC 7636).
    public static func isValidChallenge(_ text: String) -> Bool {
        (43...128).contains(text.utf8.count)
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) }
    }

    /// Writes a reset token, its PKCE flow when `codeChallenge` is given, and the mail carrying `link(token)`, in
    /// one transaction, when the account exists; the same answer either way (no account enumeration).
    public func request(
        email: String, codeChallenge: String?, clientAddress: String? = nil,
        link: @escaping @Sendable (String) -> String
    ) async throws {
        let normalised = try Credentials.normaliseEmail(email)
        if let codeChallenge, !Self.isValidChallenge(codeChallenge) {
            throw QuoteVaultError.invalid("code_challenge", "must be 43 to 128 characters of base64url")
        }
        let limits = self.limits
        try await pool.withTransaction { connection in
            guard
                let (token, userID) = try PasswordResetToken.issue(
                    email: normalised, clientAddress: clientAddress, limits: limits, connection)
            else { return }
            if let codeChallenge {
                try connection.query(
                    """
                    INSERT INTO recovery_flows (reset_token_hash, user_id, code_challenge)
                    VALUES (\(OpaqueToken.hash(token)), \(userID), \(codeChallenge))
                    """)
            }
            try MailOutbox.enqueue(
                to: normalised, subject: "Reset your QuoteVault password",
                body: """
                    Follow this link within one hour to choose a new password for your QuoteVault account:
                    \(link(token))

                    Nobody else can use it. If you did not ask for it, ignore this mail.
                    """,
                connection)
        }
    }

    /// What following a mail's link gives: an authorization code (PKCE flow) or a session (implicit flow).
    public enum LinkResult: Sendable {
        case code(String)
        case session(Session)
    }

    /// Uses the mail's token (once): a PKCE flow gets a fresh authorization code, any other request a session.
    /// - Parameter email: when given (`verifyOtp(email:token:)`), the token must be that account's.
    /// - Throws: `QuoteVaultError.resetTokenInvalid` for an unknown, used or expired token.
    public func follow(token: String, email: String? = nil, allowingCode: Bool = true) async throws -> LinkResult {
        guard OpaqueToken.isWellFormed(token) else { throw QuoteVaultError.resetTokenInvalid }
        let normalised = try email.map { try Credentials.normaliseEmail($0) }
        let sessions = self.sessions
        return try await pool.withTransaction { connection in
            guard
                let row = try connection.query(
                    """
                    UPDATE password_reset_tokens t SET used_at = now()
                    FROM users u
                    WHERE t.token_hash = \(OpaqueToken.hash(token)) AND t.used_at IS NULL AND t.expires_at > now()
                      AND u.id = t.user_id AND (\(normalised)::text IS NULL OR u.email = \(normalised))
                    RETURNING t.user_id
                    """
                ).first
            else { throw QuoteVaultError.resetTokenInvalid }
            let userID = try row.decode("user_id", as: UUID.self)
            if allowingCode {
                let code = try OpaqueToken.generate()
                let flows = try connection.query(
                    """
                    UPDATE recovery_flows SET auth_code_hash = \(OpaqueToken.hash(code)), code_issued_at = now()
                    WHERE reset_token_hash = \(OpaqueToken.hash(token)) AND auth_code_hash IS NULL
                    """)
                if flows.affectedRows == 1 { return .code(code) }
            }
            return .session(try sessions.open(for: userID, connection))
        }
    }

    /// Exchanges an authorization code and its verifier for a session (once, within `codeLifetime`).
    public func exchange(code: String, verifier: String) async throws -> Session {
        guard OpaqueToken.isWellFormed(code) else { throw RecoveryError.flowStateNotFound }
        guard Self.isValidChallenge(verifier) else { throw RecoveryError.badCodeVerifier }
        let sessions = self.sessions
        let lifetime = Self.codeLifetime
        return try await pool.withTransaction { connection in
            guard
                let flow = try connection.query(
                    """
                    SELECT user_id, code_challenge, code_issued_at > now() - make_interval(secs => \(lifetime)) AS fresh
                    FROM recovery_flows WHERE auth_code_hash = \(OpaqueToken.hash(code)) AND used_at IS NULL FOR UPDATE
                    """
                ).first
            else { throw RecoveryError.flowStateNotFound }
            guard try flow.decode("fresh", as: Bool.self) else { throw RecoveryError.flowStateExpired }
            let challenge = Base64URL.encode(Digest.sha256(Array(verifier.utf8)))
            guard
                ConstantTime.equals(
                    Array(challenge.utf8), Array(try flow.decode("code_challenge", as: String.self).utf8))
            else {
                throw RecoveryError.badCodeVerifier
            }
            try connection.query(
                "UPDATE recovery_flows SET used_at = now() WHERE auth_code_hash = \(OpaqueToken.hash(code))")
            return try sessions.open(for: try flow.decode("user_id", as: UUID.self), connection)
        }
    }

    /// The nonces a password change from an old session needs.
    public var reauthentication: Reauthentication { Reauthentication(pool: pool) }

    /// Sets the signed-in user's password; every other session of the user is revoked, this one stays, and every
    /// reset token the user still holds stops working. From a session older than a day it needs the mailed
    /// `nonce` (see `Reauthentication`), which it spends.
    /// - Throws: a validation error for a weak password, `RecoveryError.samePassword` for the current one,
    ///   `ReauthenticationError` for a missing or wrong nonce.
    public func changePassword(
        _ user: AuthenticatedUser, to password: String, nonce: String? = nil
    ) async throws -> User {
        try Credentials.validatePassword(password)
        // Before any hashing: an old session without the nonce costs one indexed read.
        try await reauthentication.check(nonce, for: user)
        let current = try await pool.query("SELECT password_hash FROM users WHERE id = \(user.userID)")
            .first?.decode("password_hash", as: String.self)
        guard current != nil else { throw QuoteVaultError.unauthorized }
        if try await hashing.verify(password, against: current) { throw RecoveryError.samePassword }
        let hash = try await hashing.hash(password)
        return try await pool.withTransaction { connection in
            try Reauthentication.spend(nonce, for: user, connection)
            try AccountService.changePassword(of: user.userID, to: hash, connection)
            try connection.query(
                """
                UPDATE sessions SET revoked_at = now()
                WHERE user_id = \(user.userID) AND id <> \(user.sessionID) AND revoked_at IS NULL
                """)
            return try User.load(user.userID, connection)
        }
    }
}
