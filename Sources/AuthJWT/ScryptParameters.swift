/// scrypt cost parameters: N = 2^`logN`, block size `r`, parallelism `p`.
public struct ScryptParameters: Sendable, Equatable, CustomStringConvertible {
    /// Base-2 logarithm of the CPU/memory cost N.
    public var logN: Int
    /// Block size; memory is 128·r·N bytes.
    public var r: Int
    /// Parallelism; OpenSSL runs the p lanes one after another, so time scales with p.
    public var p: Int

    public init(logN: Int, r: Int, p: Int) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// The parameters new hashes use: ln=14, r=12, p=1 (24 MiB).
    ///
    /// Chosen by measurement, aiming at 50–100 ms per hash on the build machine
    /// (`AUTHJWT_BENCHMARK=1` runs the benchmark test; the figures are in bench/README.md):
    /// ln=15, r=8 sits above that window there and ln=14, r=8 below it.
    /// Of the rows inside the window, r=12 buys more memory per guess
    /// (what makes scrypt costly on GPUs) than p=2, which only repeats the work
    /// in the same 16 MiB. Raise it when the hardware allows: `needsRehash`
    /// upgrades stored hashes at the next successful login.
    public static let `default` = ScryptParameters(logN: 14, r: 12, p: 1)

    /// Most memory (128·r·N bytes) a stored hash may demand: 256 MiB.
    public static let maximumMemoryBytes = 256 << 20
    /// Most work (N·r·p) a stored hash may demand: 2^22, 21× the default's.
    public static let maximumWork = 1 << 22

    /// Whether these parameters are sane enough to run. A stored hash outside
    /// these bounds is refused rather than computed, so a tampered row cannot
    /// make us allocate gigabytes or spin for minutes.
    public var isSupported: Bool {
        guard (1...24).contains(logN), (1...64).contains(r), (1...64).contains(p) else { return false }
        let n = 1 << logN
        return 128 * r * n <= Self.maximumMemoryBytes && n * r * p <= Self.maximumWork
    }

    /// Whether these demand less memory (N·r) or less work (N·r·p) than `other`.
    /// Compared as products, not per field: ln=15,r=8 is no weaker than ln=14,r=12.
    func isWeaker(than other: ScryptParameters) -> Bool {
        memoryCost < other.memoryCost || memoryCost * p < other.memoryCost * other.p
    }

    /// N·r, proportional to memory use. Only called on supported parameters, which cannot overflow.
    private var memoryCost: Int { (1 << logN) * r }

    public var description: String { "ln=\(logN),r=\(r),p=\(p)" }
}
