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
    /// A key prepared once, for keys that authenticate many messages (cursors, tokens): each tag then costs a copy
    /// of the keyed state and the message's hashing, instead of OpenSSL's one-shot `HMAC()`, which looks the
    /// algorithm up and hashes the key again on every call (measured: a tenth of a cursor page's server time).
    ///
    /// `@unchecked Sendable`: the keyed context is written only in `init`; afterwards it is only duplicated,
    /// which reads it, so any number of threads may use one key at once.
    public final class Key: @unchecked Sendable {
        /// The `EVP_MAC_CTX*`, initialised with the key and never updated.
        private let keyed: OpaquePointer

        public init(_ key: some Collection<UInt8>) {
            let mac = EVP_MAC_fetch(nil, "HMAC", nil)
            defer { EVP_MAC_free(mac) }
            let context = mac.flatMap { EVP_MAC_CTX_new($0) }
            // OSSL_PARAM keeps both pointers until EVP_MAC_init reads them: both strings live in arrays that
            // outlast the call (a string literal passed straight in may be a temporary copy).
            let parameterName = Array("digest".utf8CString)
            var digest = Array("SHA256".utf8CString)
            let initialised = context != nil && parameterName.withUnsafeBufferPointer { parameterKey in
                digest.withUnsafeMutableBufferPointer { name in
                    var parameters = [
                        OSSL_PARAM_construct_utf8_string(parameterKey.baseAddress, name.baseAddress, 0), OSSL_PARAM_construct_end(),
                    ]
                    return withCBytes(key) { EVP_MAC_init(context, $0, $1, &parameters) } == 1
                }
            }
            // Fails only if OpenSSL cannot allocate or load its provider; see `Digest.sha256` for why that traps.
            guard let context, initialised else {
                preconditionFailure("HMAC(SHA-256) key setup failed: \(OpenSSLError.drain("EVP_MAC_init"))")
            }
            keyed = context
        }

        deinit {
            EVP_MAC_CTX_free(keyed)
        }

        /// The 32-byte HMAC-SHA-256 tag of `message` under this key.
        public func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
            var tag = [UInt8](repeating: 0, count: byteCount)
            var length = 0
            let context = EVP_MAC_CTX_dup(keyed)
            defer { EVP_MAC_CTX_free(context) }
            let produced = context != nil
                && withCBytes(message) { EVP_MAC_update(context, $0, $1) } == 1
                && EVP_MAC_final(context, &tag, &length, byteCount) == 1
            precondition(produced && length == byteCount, "HMAC(SHA-256) failed: \(OpenSSLError.drain("EVP_MAC"))")
            return tag
        }
    }
}
