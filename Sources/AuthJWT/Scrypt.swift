internal import COpenSSL

/// The scrypt key-derivation function (RFC 7914) through OpenSSL.
enum Scrypt {
    /// Derives `length` bytes from `password` and `salt` with cost `n` (a power of
    /// two), block size `r` and parallelism `p`.
    static func deriveKey(
        password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int
    ) throws(OpenSSLError) -> [UInt8] {
        precondition(length > 0, "scrypt: empty output requested")
        precondition(n > 1 && n & (n - 1) == 0, "scrypt: N must be a power of two above 1")
        let maxmem = memoryLimit(n: n, r: r, p: p)
        OpenSSLError.clearQueue()
        var key = [UInt8](repeating: 0, count: length)
        let status = withCBytes(password) { passwordPointer, passwordCount in
            withCBytes(salt) { saltPointer, saltCount in
                passwordPointer.withMemoryRebound(to: CChar.self, capacity: max(passwordCount, 1)) { pass in
                    EVP_PBE_scrypt(
                        pass, passwordCount, saltPointer, saltCount,
                        n, r, p, maxmem, &key, length)
                }
            }
        }
        guard status == 1 else { throw OpenSSLError.drain("EVP_PBE_scrypt") }
        return key
    }

    /// The `maxmem` to hand OpenSSL. Passing 0 means OpenSSL's 32 MiB default,
    /// which already refuses N=2^15, r=8. OpenSSL needs B (128·r·p bytes) plus
    /// V (128·r·(N+2) bytes); a 1 MiB margin absorbs any bookkeeping a future
    /// OpenSSL adds. Callers bound N, r, p beforehand, so this is not a way in
    /// for untrusted sizes.
    static func memoryLimit(n: UInt64, r: UInt64, p: UInt64) -> UInt64 {
        let (vBlocks, o1) = n.addingReportingOverflow(2)
        let (blocks, o2) = vBlocks.addingReportingOverflow(p)
        let (perBlock, o3) = r.multipliedReportingOverflow(by: 128)
        let (bytes, o4) = blocks.multipliedReportingOverflow(by: perBlock)
        let (limit, o5) = bytes.addingReportingOverflow(1 << 20)
        precondition(!(o1 || o2 || o3 || o4 || o5), "scrypt: parameters overflow memory arithmetic")
        return limit
    }
}
