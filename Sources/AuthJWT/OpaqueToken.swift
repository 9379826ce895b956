/// Opaque bearer secrets (refresh tokens, reset links): 32 random bytes as
/// 43 characters of unpadded base64url. Store only `hash(_:)` of a token, so a
/// leaked database does not leak usable tokens.
public enum OpaqueToken {
    /// Random bytes per token.
    public static let byteCount = 32
    /// Characters per token: ceil(32 · 8 / 6).
    public static let length = 43

    /// A fresh token.
    ///
    /// - Throws: `OpenSSLError` if OpenSSL cannot produce random bytes.
    public static func generate() throws(OpenSSLError) -> String {
        Base64URL.encode(try SecureRandom.bytes(count: byteCount))
    }

    /// The value to store and look tokens up by: SHA-256 of the token's
    /// characters, as 64 lowercase hex characters. A plain (unsalted, fast)
    /// hash suffices because the token itself carries 256 bits of entropy.
    public static func hash(_ token: String) -> String {
        Digest.sha256Hex(token.utf8)
    }

    /// Whether `token` has the shape `generate()` produces — a cheap check to
    /// refuse garbage before touching the database.
    public static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == length && Base64URL.decode(token)?.count == byteCount
    }
}
