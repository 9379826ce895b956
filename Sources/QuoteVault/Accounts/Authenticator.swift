import AuthJWT
import Foundation
import PGClient

/// The caller of an authenticated request, as proven by a valid access token of a live session.
public struct AuthenticatedUser: Sendable, Equatable {
    public let userID: UUID
    public let sessionID: UUID
    public let email: String
}

/// Verifies bearer tokens: the signature and claims (no database), then that the session is still live
/// (one primary-key lookup), so a logout or a password reset refuses the session's tokens at once on every
/// server instance.
public struct Authenticator: Sendable {
    let signer: JWTSigner
    let pool: PGPool

    /// The signature and claims of an access token (no database); then `live` checks the session.
    /// - Parameter token: the bearer token, or nil when the request had none.
    /// - Throws: `QuoteVaultError.unauthorized` for any token that is missing, malformed, forged or expired.
    public func verify(_ token: String?, now: Date = Date()) throws -> AccessTokenClaims {
        guard let token, let claims = try? signer.verify(token, audience: "authenticated", now: now) else {
            throw QuoteVaultError.unauthorized
        }
        return claims
    }

    /// The caller of verified `claims` if their session is still live and their account not disabled (primary-key
    /// lookups); else `QuoteVaultError.unauthorized` (revoked, banned), or `PGError` when the database cannot answer.
    public func live(_ claims: AccessTokenClaims) async throws -> AuthenticatedUser {
        guard let userID = UUID(canonicalText: claims.sub), let sessionID = UUID(canonicalText: claims.sid) else {
            throw QuoteVaultError.unauthorized
        }
        let live =
            try await pool.read(
                """
                SELECT 1 AS live FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.id = \(sessionID) AND s.user_id = \(userID) AND s.revoked_at IS NULL
                  AND \(unsafeSQL: AccountBan.notBanned)
                """
            ).count == 1
        guard live else { throw QuoteVaultError.unauthorized }
        return AuthenticatedUser(userID: userID, sessionID: sessionID, email: claims.email ?? "")
    }

    /// Which of `sessionIDs` are still live, by the same rule as `live` (one lookup by primary key per id, in one
    /// statement): for connections that outlive the request that opened them.
    public func liveSessions(_ sessionIDs: [UUID]) async throws -> Set<UUID> {
        guard !sessionIDs.isEmpty else { return [] }
        let rows = try await pool.read(
            "SELECT id FROM sessions WHERE id = ANY(\(sessionIDs)) AND revoked_at IS NULL")
        return Set(try rows.map { try $0.decode("id", as: UUID.self) })
    }
}
