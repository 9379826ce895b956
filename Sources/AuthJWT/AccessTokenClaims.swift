/// The payload of an access token.
///
/// Registered JWT claims keep their short names (`sub`, `iat`, …); times are
/// whole seconds since 1970 (JWT "NumericDate"). Optional claims are omitted
/// from the JSON when nil, and claims this type does not know are ignored when
/// decoding — so fields can be added later without breaking tokens already issued.
public struct AccessTokenClaims: Codable, Sendable, Equatable {
    /// Subject: the user's id.
    public var sub: String
    /// The session the token belongs to.
    public var sid: String
    /// The user's email, if they have one.
    public var email: String?
    /// Issued at, seconds since 1970.
    public var iat: Int
    /// Expires at, seconds since 1970; the token is invalid from this second on.
    public var exp: Int
    /// Audience; verification requires it to contain the expected one.
    public var aud: JWTAudience
    /// The user's role, e.g. `"authenticated"`.
    public var role: String
    /// Not before, seconds since 1970.
    public var nbf: Int?
    /// Issuer.
    public var iss: String?
    /// Authenticator assurance level, e.g. `"aal1"`.
    public var aal: String?
    /// Session id under the name some clients expect (`session_id`).
    public var sessionID: String?
    /// Whether the user signed in anonymously (`is_anonymous`).
    public var isAnonymous: Bool?
    /// Metadata only the server may change (`app_metadata`).
    public var appMetadata: [String: ClaimValue]?
    /// Metadata the user may change (`user_metadata`).
    public var userMetadata: [String: ClaimValue]?

    public init(
        sub: String, sid: String, email: String?, iat: Int, exp: Int,
        aud: JWTAudience = "authenticated", role: String,
        nbf: Int? = nil, iss: String? = nil, aal: String? = nil, sessionID: String? = nil,
        isAnonymous: Bool? = nil, appMetadata: [String: ClaimValue]? = nil,
        userMetadata: [String: ClaimValue]? = nil
    ) {
        self.sub = sub
        self.sid = sid
        self.email = email
        self.iat = iat
        self.exp = exp
        self.aud = aud
        self.role = role
        self.nbf = nbf
        self.iss = iss
        self.aal = aal
        self.sessionID = sessionID
        self.isAnonymous = isAnonymous
        self.appMetadata = appMetadata
        self.userMetadata = userMetadata
    }

    enum CodingKeys: String, CodingKey {
        case sub, sid, email, iat, exp, aud, role, nbf, iss, aal
        case sessionID = "session_id"
        case isAnonymous = "is_anonymous"
        case appMetadata = "app_metadata"
        case userMetadata = "user_metadata"
    }
}
