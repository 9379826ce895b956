internal import COpenSSL

/// HMAC with SHA-1 (RFC 2104), for TOTP codes (RFC 6238's default, the one authenticator apps use). SHA-1's
/// collision weakness does not touch HMAC's use as a keyed function. OpenSSL's own `HMAC` construction.
public enum HMACSHA1 {
    /// Length of a tag in bytes.
    public static let byteCount = 20

    /// The 20-byte HMAC-SHA-1 tag of `message` under `key`.
    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = withCBytes(key) { keyBytes, keyCount in
            withCBytes(message) { messageBytes, messageCount in
                HMAC(EVP_sha1(), keyBytes, Int32(keyCount), messageBytes, messageCount, &tag, &length)
            }
        }
        // As for digests: failing on memory means OpenSSL cannot work at all (see `Digest.sha256`).
        precondition(result != nil && Int(length) == byteCount, "HMAC(SHA-1) failed: \(OpenSSLError.drain("HMAC"))")
        return Array(tag.prefix(byteCount))
    }
}
