internal import COpenSSL

/// HMAC with SHA-256 (RFC 2104), as used by HS256 JWTs.
public enum HMACSHA256 {
    /// Length of a tag in bytes.
    public static let byteCount = 32

    /// The 32-byte HMAC-SHA-256 tag of `message` under `key`, for a key used once (a key that signs many
    /// messages is better prepared once as a `Key`).
    public static func authenticationCode(
        for message: some Collection<UInt8>, key: some Collection<UInt8>
    ) -> [UInt8] {
        Key(key).authenticationCode(for: message)
    }
}

extension HMACSHA256 {
    /// A key prepared once, for keys that authenticate many messages (cursors, tokens).
    ///
    /// HMAC is `H(K ⊕ opad ‖ H(K ⊕ ipad ‖ m))`: the two padded keys are one SHA-256 block each, so the key
    /// hashes them once and keeps the two resulting states. A tag then copies each state (a plain struct, on the
    /// stack) and hashes only the message and the inner digest. OpenSSL's `EVP_MAC` offers no allocation-free copy
    /// in 3.0 (duplicating a keyed context allocates and copies three digest contexts), a cost every page with a
    /// cursor paid (bench/README.md). The hashing is OpenSSL's own `SHA256_*` (wrapped in the C shim);
    /// the construction is checked against RFC 4231's vectors.
    ///
    /// Immutable after `init`, so any number of threads may use one key at once.
    public final class Key: Sendable {
        /// SHA-256 after absorbing `K ⊕ ipad` (inner) and `K ⊕ opad` (outer).
        private let inner: SHA256_CTX
        private let outer: SHA256_CTX

        private static let blockSize = 64

        public init(_ key: some Collection<UInt8>) {
            // Keys longer than a block are hashed first (RFC 2104); shorter ones are padded with zeros.
            var block = key.count > Self.blockSize ? Digest.sha256(key) : Array(key)
            block += repeatElement(0, count: Self.blockSize - block.count)
            inner = Self.state(absorbing: block.map { $0 ^ 0x36 })
            outer = Self.state(absorbing: block.map { $0 ^ 0x5c })
        }

        private static func state(absorbing paddedKey: [UInt8]) -> SHA256_CTX {
            var context = SHA256_CTX()
            qv_sha256_init(&context)
            qv_sha256_update(&context, paddedKey, paddedKey.count)
            return context
        }

        /// The 32-byte HMAC-SHA-256 tag of `message` under this key.
        public func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
            withCBytes(message) { tag(forBytesAt: $0, count: $1) }
        }

        /// The same for an array: not generic, so a caller in another module pays no run-time type lookup.
        public func authenticationCode(for message: [UInt8]) -> [UInt8] {
            withCBytes(message) { tag(forBytesAt: $0, count: $1) }
        }

        private func tag(forBytesAt message: UnsafePointer<UInt8>, count: Int) -> [UInt8] {
            var innerDigest = [UInt8](repeating: 0, count: byteCount)
            var context = inner
            qv_sha256_update(&context, message, count)
            qv_sha256_final(&innerDigest, &context)
            var tag = [UInt8](repeating: 0, count: byteCount)
            context = outer
            qv_sha256_update(&context, innerDigest, byteCount)
            qv_sha256_final(&tag, &context)
            return tag
        }
    }
}
