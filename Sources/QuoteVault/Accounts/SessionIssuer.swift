import AuthJWT
import Foundation
import PGClient

/// Opens sessions and mints their tokens: a JWT access token naming the session, and an opaque refresh
/// token of which only the SHA-256 is stored.
public struct SessionIssuer: Sendable {
    private let signer: JWTSigner
    public let accessTokenTTL: Int
    public let refreshTokenTTL: Int
    /// Seconds after its rotation during which a refresh token still refreshes (see `AccountService.refresh`).
    public let refreshTokenReuseInterval: Int

    public init(signer: JWTSigner, accessTokenTTL: Int, refreshTokenTTL: Int, refreshTokenReuseInterval: Int = 10) {
        self.signer = signer
        self.accessTokenTTL = accessTokenTTL
        self.refreshTokenTTL = refreshTokenTTL
        self.refreshTokenReuseInterval = refreshTokenReuseInterval
    }

    /// The `iss` claim of access tokens.
    public static let issuer = "quotevault"
    /// Supabase's `app_metadata`: how the user signs in (email and password is the only way here).
    public static let appMetadata: [String: JSONValue] = ["provider": .string("email"), "providers": .array([.string("email")])]

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
        // One token for both APIs: `/v1` reads sub/sid; Supabase clients read GoTrue's claims.
        let claims = AccessTokenClaims(
            sub: userID.canonicalText, sid: sessionID.canonicalText, email: user.email, iat: now,
            exp: now + accessTokenTTL, role: "authenticated", iss: Self.issuer, aal: "aal1",
            sessionID: sessionID.canonicalText, isAnonymous: false,
            appMetadata: Self.appMetadata, userMetadata: user.metadata)
        return Session(
            accessToken: try signer.sign(claims), expiresIn: accessTokenTTL, expiresAt: now + accessTokenTTL,
            refreshToken: refreshToken, user: user)
    }
}
