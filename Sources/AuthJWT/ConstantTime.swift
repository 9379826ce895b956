internal import COpenSSL

/// Comparisons whose running time does not depend on where inputs differ, so an
/// attacker timing responses learns nothing about a secret byte by byte.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Only the contents are compared in
    /// constant time; lengths are treated as public (a MAC's length is no secret).
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return withCBytes(a) { pa, count in
            withCBytes(b) { pb, _ in CRYPTO_memcmp(pa, pb, count) == 0 }
        }
    }
}
