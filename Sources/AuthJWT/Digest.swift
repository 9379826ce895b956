internal import COpenSSL

/// Message digests. Named `Digest` (not `SHA256`) so it cannot collide with
/// swift-crypto's `SHA256` in files that import both.
public enum Digest {
    /// The SHA-256 digest of `bytes` (32 bytes).
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        digest(bytes, EVP_sha256(), "SHA-256")
    }

    /// The SHA-1 digest of `bytes` (20 bytes): only where a protocol fixes it (a WebSocket handshake's accept value).
    public static func sha1(_ bytes: some Collection<UInt8>) -> [UInt8] {
        digest(bytes, EVP_sha1(), "SHA-1")
    }

    private static func digest(_ bytes: some Collection<UInt8>, _ algorithm: OpaquePointer?, _ name: String) -> [UInt8]
    {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let status = withCBytes(bytes) { input, count in
            EVP_Digest(input, count, &digest, &length, algorithm, nil)
        }
        // Hashing memory only fails if OpenSSL cannot allocate or load its default
        // provider — the process cannot do any cryptography then, and Swift treats
        // allocation failure as fatal too. So trap rather than make every caller
        // (ETags, token hashes) handle an error they could not act on.
        precondition(status == 1, "EVP_Digest(\(name)) failed: \(OpenSSLError.drain("EVP_Digest"))")
        return Array(digest.prefix(Int(length)))
    }

    /// The SHA-256 digest of `bytes` as 64 lowercase hex characters.
    public static func sha256Hex(_ bytes: some Collection<UInt8>) -> String {
        hex(sha256(bytes))
    }

    /// Lowercase hex of `bytes`, two characters per byte.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
