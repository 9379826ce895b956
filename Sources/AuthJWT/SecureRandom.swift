internal import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// Returns `count` random bytes.
    ///
    /// - Throws: `OpenSSLError` when OpenSSL cannot produce them (e.g. its DRBG
    ///   could not be seeded). That is trouble in the environment, not a bug, so
    ///   it is thrown rather than trapped: the caller can fail one request
    ///   instead of the whole process.
    public static func bytes(count: Int) throws(OpenSSLError) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "SecureRandom.bytes: count out of range")
        guard count > 0 else { return [] }
        OpenSSLError.clearQueue()
        var succeeded = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            succeeded = RAND_bytes(buffer.baseAddress, Int32(count)) == 1
            // Zero on failure so no uninitialised memory ever escapes.
            if !succeeded { buffer.initialize(repeating: 0) }
            initialized = count
        }
        guard succeeded else { throw OpenSSLError.drain("RAND_bytes") }
        return bytes
    }
}
