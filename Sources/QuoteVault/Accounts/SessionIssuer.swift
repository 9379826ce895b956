import AuthJWT
import Foundation
import PGClient

/// Opens sessions and mints their tokens: a JWT access token naming the session, and an opaque refresh
/// token of which only the SHA-256 is stored.
public struct SessionIssuer: Sendable {
    private let signer: JWTSigner
    public let accessTokenTTL: Int
    public let refreshTokenTTL: Int

    public init(signer: JWTSigner, accessTokenTTL: Int, refreshTokenTTL: Int) {
        self.signer = signer
        self.accessTokenTTL = accessTokenTTL
        self.refreshTokenTTL = refreshTokenTTL
    }

    /// A new session for `userID`, inside the caller's transaction.
    func open(for userID: UUID, _ connection: PGConnection) throws -> Session {
        let rows = try connection.query("""
            INSERT INTO sessions (user_id, expires_at) VALUES (\(userID), now() + \(refreshTokenTTL) * interval '1 second')
            RETURNING id
            """)
        return try issue(sessionID: try rows[rows.startIndex].decode("id"), userID: userID, connection)
    }

    /// New tokens for an existing session: a fresh refresh token and an access token.
    func issue(sessionID: UUID, userID: UUID, _ connection: PGConnection) throws -> Session {
        let refreshToken = try OpaqueToken.generate()
        try connection.query("""
            INSERT INTO refresh_tokens (token_hash, session_id) VALUES (\(OpaqueToken.hash(refreshToken)), \(sessionID))
            """)
        let user = try User.load(userID, connection)
        let now = Int(Date().timeIntervalSince1970)
        let claims = AccessTokenClaims(
            sub: userID.uuidString.lowercased(), sid: sessionID.uuidString.lowercased(), email: user.email, iat: now,
            exp: now + accessTokenTTL, role: "authenticated")
        return Session(
            accessToken: try signer.sign(claims), expiresIn: accessTokenTTL, expiresAt: now + accessTokenTTL,
            refreshToken: refreshToken, user: user)
    }
}
