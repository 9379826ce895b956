internal import COpenSSL

/// HMAC with SHA-256 (RFC 2104), as used by HS256 JWTs.
public enum HMACSHA256 {
    /// Length of a tag in bytes.
    public static let byteCount = 32

    /// The 32-byte HMAC-SHA-256 tag of `message` under `key`.
    public static func authenticationCode(
        for message: some Collection<UInt8>, key: some Collection<UInt8>
    ) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let produced = withCBytes(key) { keyPointer, keyCount in
            precondition(keyCount <= Int(Int32.max), "HMAC key too long")
            return withCBytes(message) { messagePointer, messageCount in
                HMAC(EVP_sha256(), keyPointer, Int32(keyCount),
                     messagePointer, messageCount, &tag, &length) != nil
            }
        }
        // Like SHA-256 over memory, this fails only if OpenSSL cannot allocate or
        // load its provider; see `Digest.sha256` for why that traps.
        precondition(produced && length == byteCount,
                     "HMAC(SHA-256) failed: \(OpenSSLError.drain("HMAC"))")
        return tag
    }
}
