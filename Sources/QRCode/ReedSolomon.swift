/// The error-correction codewords of one block: the remainder of the block's data, as a polynomial times x^n,
/// divided by the generator polynomial (x − α⁰)(x − α¹)…(x − αⁿ⁻¹) over GF(2⁸).
public struct ReedSolomon: Sendable {
    /// The generator's coefficients after its leading 1, highest degree first.
    private let generator: [UInt8]

    /// A code that appends `degree` error-correction codewords.
    public init(degree: Int) {
        precondition((1...255).contains(degree), "a Reed–Solomon degree is 1...255")
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1  // the polynomial 1, stored without its leading term
        for root in 0..<degree {
            // Multiply by (x − αʳᵒᵒᵗ); in GF(2⁸) minus is plus.
            let factor = GaloisField.power(root)
            for index in 0..<degree {
                coefficients[index] = GaloisField.multiply(coefficients[index], factor)
                if index + 1 < degree { coefficients[index] ^= coefficients[index + 1] }
            }
        }
        generator = coefficients
    }

    /// The error-correction codewords of `data`.
    public func remainder(of data: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for index in remainder.indices { remainder[index] ^= GaloisField.multiply(generator[index], factor) }
        }
        return remainder
    }
}
