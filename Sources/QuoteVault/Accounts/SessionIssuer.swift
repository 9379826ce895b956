import AuthJWT
import Foundation
import PGClient

/// Opens sessions and mints their tokens: a JWT access token naming the session, and an opaque refresh
/// token of which only the SHA-256 is stored.
public struct SessionIssuer: Sendable {
    let signer: JWTSigner
    let chain: RefreshTokenChain
    public let accessTokenTTL: Int
    public let refreshTokenTTL: Int
    /// Seconds after its rotation during which a refresh token still refreshes (see `AccountService.refresh`).
    public let refreshTokenReuseInterval: Int

    /// - Parameter secret: the server's secret, from which the refresh token chain's key is derived.
    public init(
        signer: JWTSigner, secret: [UInt8], accessTokenTTL: Int, refreshTokenTTL: Int,
        refreshTokenReuseInterval: Int = 10
    ) {
        self.signer = signer
        self.chain = RefreshTokenChain(secret: secret)
        self.accessTokenTTL = accessTokenTTL
        self.refreshTokenTTL = refreshTokenTTL
        self.refreshTokenReuseInterval = refreshTokenReuseInterval
    }

    /// The `iss` claim of access tokens.
    public static let issuer = "quotevault"
    /// Supabase's `app_metadata`: how the user signs in (email and password is the only way here).
    public static let appMetadata: [String: JSONValue] = [
        "provider": .string("email"), "providers": .array([.string("email")]),
    ]

    /// A new session for `userID`, inside the caller's transaction.
    func open(for userID: UUID, _ connection: PGConnection) throws -> Session {
        let rows = try connection.query(
            """
            INSERT INTO sessions (user_id, expires_at)
            VALUES (\(userID), now() + \(refreshTokenTTL) * interval '1 second')
            RETURNING id
            """)
        return try issue(sessionID: try rows[rows.startIndex].decode("id"), userID: userID, connection)
    }

    /// New tokens for an existing session: a refresh token (stored here) and an access token. The refresh token is
    /// random, or when it replaces `parent` on its rotation, the chain's child of `parent`.
    func issue(sessionID: UUID, userID: UUID, replacing parent: String? = nil, _ connection: PGConnection) throws
        -> Session
    {
        let refreshToken = try parent.map(chain.child(of:)) ?? OpaqueToken.generate()
        try connection.query(
            """
            INSERT INTO refresh_tokens (token_hash, session_id) VALUES (\(OpaqueToken.hash(refreshToken)), \(sessionID))
            """)
        return try session(refreshToken: refreshToken, sessionID: sessionID, userID: userID, connection)
    }

    /// The session's live refresh token, found by following the chain down from the rotated `token`; nil when
    /// the chain leaves the session's stored tokens (a token rotated under another secret).
    func liveDescendant(of token: String, sessionID: UUID, _ connection: PGConnection) throws -> String? {
        var candidate = chain.child(of: token)
        for _ in 0..<RefreshTokenChain.maximumWalk {
            guard
                let row = try connection.query(
                    """
                    SELECT rotated_at IS NOT NULL AS rotated FROM refresh_tokens
                    WHERE token_hash = \(OpaqueToken.hash(candidate)) AND session_id = \(sessionID)
                    """
                ).first
            else { return nil }
            guard try row.decode("rotated", as: Bool.self) else { return candidate }
            candidate = chain.child(of: candidate)
        }
        return nil
    }

    /// An access token for the session, answered with `refreshToken` (already stored).
    func session(refreshToken: String, sessionID: UUID, userID: UUID, _ connection: PGConnection) throws -> Session {
        // Every token is minted here (sign-up, login, refresh, a reset link): a disabled account gets none.
        try AccountBan.refuseIfBanned(userID, connection)
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
