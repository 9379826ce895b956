import AuthJWT
import Foundation
import Logging
import PGClient

/// Sign-up, login, refresh, logout, password reset and account deletion.
public struct AccountService: Sendable {
    let pool: PGPool
    let hashing: PasswordHashingQueue
    let sessions: SessionIssuer
    let limits: RateLimiter
    let resetLinkBase: String

    /// Creates the account and its first session. The unique email constraint decides concurrent sign-ups.
    /// - Parameter metadata: Supabase's `user_metadata` (empty through `/v1`).
    public func signUp(
        email: String, password: String, displayName: String?, metadata: [String: JSONValue] = [:]
    ) async throws -> Session {
        var errors: [FieldError] = []
        let normalised = try errors.collect { try Credentials.normaliseEmail(email) } ?? ""
        try errors.collect { try Credentials.validatePassword(password) }
        try errors.collect { try Credentials.validateDisplayName(displayName) }
        let metadataJSON = try errors.collect { try UserMetadata.encode(metadata) } ?? PGJSON(data: Data("{}".utf8))
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        // Each sign-up costs a password hash: counted per address before hashing (kept whatever the outcome).
        let limits = self.limits
        let address = RequestOrigin.clientAddress
        try limits.refuseIfRecentlyLimited("signup", address: address)
        _ = try await pool.withTransaction { connection in
            try limits.reserve("signup", address: address, addressRule: RateLimiter.signUpsPerAddress, connection)
        }
        let hash = try await hashing.hash(password)
        let sessions = self.sessions
        do {
            return try await pool.withTransaction { [normalised] connection in
                let rows = try connection.query(
                    """
                    INSERT INTO users (email, password_hash, user_metadata)
                    VALUES (\(normalised), \(hash), \(metadataJSON)) RETURNING id
                    """)
                let userID = try rows[rows.startIndex].decode("id", as: UUID.self)
                try connection.query("INSERT INTO profiles (id, display_name) VALUES (\(userID), \(displayName))")
                return try sessions.open(for: userID, connection)
            }
        } catch let error as PGError where error.sqlState == .uniqueViolation {
            throw QuoteVaultError.emailExists
        }
    }

    /// The same `invalidCredentials` for an unknown email and a wrong password, after the same hashing work.
    ///
    /// The attempt is reserved as a failure before hashing (atomically, in PostgreSQL, see `RateLimiter.reserve`),
    /// so concurrent wrong passwords cannot all be evaluated against the same count; a success gives it back.
    public func logIn(email: String, password: String, clientAddress: String) async throws -> Session {
        let normalised = (try? Credentials.normaliseEmail(email)) ?? email.lowercased()
        let limits = self.limits
        try limits.refuseIfRecentlyLimited("login_failed", email: normalised, address: clientAddress)
        let (attempt, stored) = try await pool.withTransaction { connection -> (Int64, (UUID, String)?) in
            let attempt = try limits.reserve(
                "login_failed", email: normalised, emailRule: RateLimiter.failedLoginsPerEmail,
                address: clientAddress, addressRule: RateLimiter.failedLoginsPerAddress, connection)
            guard
                let row = try connection.query("SELECT id, password_hash FROM users WHERE email = \(normalised)").first
            else {
                return (attempt, nil)
            }
            return (attempt, (try row.decode("id", as: UUID.self), try row.decode("password_hash", as: String.self)))
        }
        let matches = try await givingBack(attempt) { try await hashing.verify(password, against: stored?.1) }
        guard matches, let (userID, phc) = stored else { throw QuoteVaultError.invalidCredentials }
        // Stored parameters weaker than today's: upgrade the hash while we have the password.
        let upgraded = hashing.hasher.needsRehash(phc) ? try await hashing.hash(password) : nil
        let sessions = self.sessions
        return try await pool.withTransaction { connection in
            try limits.giveBack(attempt, connection)
            if let upgraded {
                try connection.query("UPDATE users SET password_hash = \(upgraded) WHERE id = \(userID)")
            }
            return try sessions.open(for: userID, connection)
        }
    }

    /// Rotates the refresh token. A token that was already rotated means it leaked: the whole session is
    /// revoked (committed), and the caller gets `refreshTokenReused` — except within the reuse interval after its
    /// rotation (`SessionIssuer.refreshTokenReuseInterval`, like GoTrue's `refresh_token_reuse_interval`): parallel
    /// refreshes of one client then all get the session's one live refresh token (the chain's active child) and a
    /// new access token, so one refresh token never becomes two sessions.
    ///
    /// The token's row and its session's row are locked (`FOR UPDATE`), so every refresh of a session, on any
    /// server instance, waits for the one before it to commit and then sees its rotation.
    public func refresh(refreshToken: String) async throws -> Session {
        guard OpaqueToken.isWellFormed(refreshToken) else { throw QuoteVaultError.refreshTokenInvalid }
        let tokenHash = OpaqueToken.hash(refreshToken)
        let sessions = self.sessions
        return try await pool.withTransaction { connection in
            guard
                let row = try connection.query(
                    """
                    SELECT t.session_id, t.rotated_at IS NOT NULL AS rotated, s.user_id,
                           t.rotated_at > now() - \(sessions.refreshTokenReuseInterval) * interval '1 second'
                               AS recently_rotated,
                           s.revoked_at IS NULL AND s.expires_at > now() AS live
                    FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id
                    WHERE t.token_hash = \(tokenHash)
                    FOR UPDATE OF t, s
                    """
                ).first
            else { throw QuoteVaultError.refreshTokenInvalid }
            let sessionID = try row.decode("session_id", as: UUID.self)
            let userID = try row.decode("user_id", as: UUID.self)
            guard try row.decode("live", as: Bool.self) else { throw QuoteVaultError.refreshTokenInvalid }
            if try row.decode("rotated", as: Bool.self) {
                if try row.decode("recently_rotated", as: Bool?.self) == true {
                    let live = try sessions.liveDescendant(of: refreshToken, sessionID: sessionID, connection)
                    guard let live else { throw QuoteVaultError.refreshTokenInvalid }
                    return try sessions.session(refreshToken: live, sessionID: sessionID, userID: userID, connection)
                }
                try connection.query("UPDATE sessions SET revoked_at = now() WHERE id = \(sessionID)")
                throw PGCommitThenThrow(QuoteVaultError.refreshTokenReused)
            }
            try connection.query("UPDATE refresh_tokens SET rotated_at = now() WHERE token_hash = \(tokenHash)")
            try connection.query("UPDATE sessions SET refreshed_at = now() WHERE id = \(sessionID)")
            return try sessions.issue(sessionID: sessionID, userID: userID, replacing: refreshToken, connection)
        }
    }

    /// Which sessions a logout ends.
    public enum LogoutScope: String, Sendable {
        /// The caller's session only.
        case local
        /// Every session of the user.
        case global
        /// Every session of the user but the caller's.
        case others
    }

    /// Revokes sessions: their refresh tokens and every access token naming them stop working at once.
    public func logOut(_ user: AuthenticatedUser, scope: LogoutScope = .local) async throws {
        let sessions: PGQuery =
            switch scope {
            case .local: "id = \(user.sessionID)"
            case .global: "user_id = \(user.userID)"
            case .others: "user_id = \(user.userID) AND id <> \(user.sessionID)"
            }
        try await pool.query("UPDATE sessions SET revoked_at = now() WHERE \(sessions) AND revoked_at IS NULL")
    }

    /// Writes a reset token and its mail (same transaction) when the account exists; answers the same either way.
    /// Throttled per email and per `clientAddress` (`RateLimiter.resetsPerEmail`, `.resetsPerAddress`).
    /// - Parameter actor: an owner sending it from the console, audited with the mail.
    public func requestPasswordReset(email: String, clientAddress: String? = nil, by actor: AuditActor? = nil)
        async throws
    {
        let normalised = try Credentials.normaliseEmail(email)
        let limits = self.limits
        let linkBase = resetLinkBase
        try await pool.withTransaction { connection in
            guard
                let (token, userID) = try PasswordResetToken.issue(
                    email: normalised, clientAddress: clientAddress, limits: limits, connection)
            else { return }
            if let actor {
                try AuditLog.record(
                    actor, action: "account.reset_mail", target: userID.uuidString.lowercased(),
                    after: ["email": normalised], connection)
            }
            try MailOutbox.enqueue(
                to: normalised, subject: "Reset your QuoteVault password",
                body: """
                    Someone asked to reset the password of your QuoteVault account.

                    To choose a new password, open this link within one hour:
                    \(linkBase)?token=\(token)

                    If it was not you, ignore this mail: your password stays as it is.
                    """,
                connection)
        }
    }

    /// Sets a new password with a single-use reset token; every other session of the user is revoked, and every
    /// other outstanding reset token of the user stops working.
    ///
    /// Cheap refusals first: attempts are throttled per address (a failure counts), and the token is looked up
    /// before the new password is hashed, so a flood of made-up tokens costs no hashing.
    public func confirmPasswordReset(token: String, newPassword: String) async throws -> Session {
        let limits = self.limits
        let address = RequestOrigin.clientAddress
        // An address over its limit is refused whatever it sends (malformed tokens too), so a flood stays refused.
        try limits.refuseIfRecentlyLimited("reset_confirm_failed", address: address)
        try Credentials.validatePassword(newPassword)
        guard OpaqueToken.isWellFormed(token) else { throw QuoteVaultError.resetTokenInvalid }
        let tokenHash = OpaqueToken.hash(token)
        let (attempt, known) = try await pool.withTransaction { connection -> (Int64, Bool) in
            let attempt = try limits.reserve(
                "reset_confirm_failed", address: address, addressRule: RateLimiter.failedResetConfirmationsPerAddress,
                connection)
            let known =
                try connection.query(
                    """
                    SELECT 1 AS known FROM password_reset_tokens
                    WHERE token_hash = \(tokenHash) AND used_at IS NULL AND expires_at > now()
                    """
                ).count == 1
            return (attempt, known)
        }
        guard known else { throw QuoteVaultError.resetTokenInvalid }
        let hash = try await givingBack(attempt) { try await hashing.hash(newPassword) }
        let sessions = self.sessions
        return try await pool.withTransaction { connection in
            guard
                let row = try connection.query(
                    """
                    UPDATE password_reset_tokens SET used_at = now()
                    WHERE token_hash = \(OpaqueToken.hash(token)) AND used_at IS NULL AND expires_at > now()
                    RETURNING user_id
                    """
                ).first
            else { throw QuoteVaultError.resetTokenInvalid }
            let userID = try row.decode("user_id", as: UUID.self)
            try limits.giveBack(attempt, connection)
            try Self.changePassword(of: userID, to: hash, connection)
            try connection.query(
                "UPDATE sessions SET revoked_at = now() WHERE user_id = \(userID) AND revoked_at IS NULL")
            return try sessions.open(for: userID, connection)
        }
    }

    /// Runs `hashing` for a reserved attempt; when it throws (the hashing queue is full), the password was not
    /// evaluated, so the attempt is given back: not a failure.
    private func givingBack<T>(_ attempt: Int64, _ hashing: () async throws -> T) async throws -> T {
        do {
            return try await hashing()
        } catch {
            try? await pool.withConnection { [limits] in try limits.giveBack(attempt, $0) }
            throw error
        }
    }

    /// Stores a new password hash; every reset token the user still holds stops working (a reset mail sent before
    /// the change must not be able to undo it). Every password change goes through here.
    static func changePassword(of userID: UUID, to hash: String, _ connection: PGConnection) throws {
        try connection.query("UPDATE users SET password_hash = \(hash), updated_at = now() WHERE id = \(userID)")
        try connection.query(
            """
            UPDATE password_reset_tokens SET used_at = now() WHERE user_id = \(userID) AND used_at IS NULL
            """)
    }

    /// Deletes the account and everything it owns (foreign-key cascades), after checking the password.
    /// A wrong password here is throttled like a failed login (the same counts per account and per address), so a
    /// stolen session cannot be used to guess the password.
    public func deleteAccount(_ user: AuthenticatedUser, password: String) async throws {
        guard let row = try await pool.query("SELECT email, password_hash FROM users WHERE id = \(user.userID)").first
        else { throw QuoteVaultError.unauthorized }
        let email = try row.decode("email", as: String.self)
        let phc = try row.decode("password_hash", as: String.self)
        let (limits, address) = (self.limits, RequestOrigin.clientAddress)
        try limits.refuseIfRecentlyLimited("login_failed", email: email, address: address)
        let attempt = try await pool.withTransaction { connection in
            try limits.reserve(
                "login_failed", email: email, emailRule: RateLimiter.failedLoginsPerEmail,
                address: address, addressRule: RateLimiter.failedLoginsPerAddress, connection)
        }
        let matches = try await givingBack(attempt) { try await hashing.verify(password, against: phc) }
        guard matches else { throw QuoteVaultError.invalidCredentials }
        try await pool.withTransaction { connection in
            try limits.giveBack(attempt, connection)
            try connection.query("DELETE FROM users WHERE id = \(user.userID)")
        }
    }
}
