/// Arithmetic in GF(2⁸) modulo x⁸ + x⁴ + x³ + x² + 1 (0x11D), the field of QR codes' Reed–Solomon codes, by
/// tables of powers of the generator α = 2 and their logarithms.
enum GaloisField {
    /// αⁱ for i in 0..<255, twice over, so a sum of two logarithms needs no reduction.
    static let exponents: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 510)
        var value = 1
        for power in 0..<255 {
            table[power] = UInt8(value)
            table[power + 255] = UInt8(value)
            value <<= 1
            if value > 0xFF { value ^= 0x11D }
        }
        return table
    }()

    /// log_α(v) for v in 1...255 (index 0 unused: 0 has no logarithm).
    static let logarithms: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for power in 0..<255 { table[Int(exponents[power])] = power }
        return table
    }()

    static func multiply(_ left: UInt8, _ right: UInt8) -> UInt8 {
        guard left != 0, right != 0 else { return 0 }
        return exponents[logarithms[Int(left)] + logarithms[Int(right)]]
    }

    /// αⁿ.
    static func power(_ exponent: Int) -> UInt8 { exponents[exponent % 255] }
}
