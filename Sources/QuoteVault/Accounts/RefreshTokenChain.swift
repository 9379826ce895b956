import AuthJWT

/// How a session's refresh tokens follow one another. A session's first token is random; every later one is
/// derived from the token it replaces: `child(T) = base64url(HMAC-SHA-256(K, T))`, with `K` derived from the
/// server's secret. So a rotated token presented again within the reuse interval can be answered with the very
/// token its rotation issued (GoTrue's "active child") while only hashes are stored, and two rotations of one
/// token can only ever produce one child (its hash is the primary key). Without the secret, a stolen token
/// reveals nothing of the tokens after it.
public struct RefreshTokenChain: Sendable {
    private let key: HMACSHA256.Key

    /// The most tokens `AccountService.refresh` follows down a chain to find the live one: a chain grows by one
    /// per refresh, and only refreshes within the reuse interval are ever followed.
    static let maximumWalk = 64

    public init(secret: [UInt8]) {
        key = HMACSHA256.Key(HMACSHA256.authenticationCode(for: Array("refresh-token-child".utf8), key: secret))
    }

    /// The token that replaces `token` when it rotates: 32 bytes as 43 characters, like `OpaqueToken.generate()`.
    func child(of token: String) -> String {
        Base64URL.encode(key.authenticationCode(for: Array(token.utf8)))
    }
}
