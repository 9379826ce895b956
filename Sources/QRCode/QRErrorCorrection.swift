/// How much of a QR code may be lost and still read: L about 7 %, M about 15 % (Q and H are not offered: an
/// on-screen code is not scratched, and lower levels keep it small).
public enum QRErrorCorrection: Sendable, CaseIterable {
    case low, medium

    /// The two bits the format information carries (ISO/IEC 18004 table 12: L = 01, M = 00).
    var formatBits: Int {
        switch self {
        case .low: 1
        case .medium: 0
        }
    }

    /// Error-correction codewords per block, by version 1...20 (ISO/IEC 18004 table 9).
    var codewordsPerBlock: [Int] {
        switch self {
        case .low: [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28]
        case .medium: [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26]
        }
    }

    /// Blocks, by version 1...20 (the same table).
    var blocks: [Int] {
        switch self {
        case .low: [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8]
        case .medium: [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16]
        }
    }
}
