/// A QR code's version, 1...20 (21×21 to 97×97 modules): its size, its alignment patterns, and how many
/// codewords it holds at each error-correction level.
struct QRVersion: Sendable, Equatable {
    static let range = 1...20

    let number: Int

    var size: Int { number * 4 + 17 }

    /// Modules left for data and error correction once the function patterns are drawn (ISO/IEC 18004 table 1).
    var rawDataModules: Int {
        var modules = (16 * number + 128) * number + 64
        if number >= 2 {
            let alignments = number / 7 + 2
            modules -= (25 * alignments - 10) * alignments - 55
            if number >= 7 { modules -= 36 }  // the two version information blocks
        }
        return modules
    }

    var totalCodewords: Int { rawDataModules / 8 }

    func dataCodewords(_ correction: QRErrorCorrection) -> Int {
        totalCodewords - correction.codewordsPerBlock[number - 1] * correction.blocks[number - 1]
    }

    /// The bits of byte mode's character count: 8 up to version 9, 16 from 10 on.
    var byteCountBits: Int { number <= 9 ? 8 : 16 }

    /// The bytes byte mode holds at `correction` (mode and count indicators taken off).
    func byteCapacity(_ correction: QRErrorCorrection) -> Int {
        (dataCodewords(correction) * 8 - 4 - byteCountBits) / 8
    }

    /// Centres of the alignment patterns along each axis (ISO/IEC 18004 annex E), evenly spaced from 6 to
    /// size − 7, the gaps even and the first one taking what does not divide.
    var alignmentCentres: [Int] {
        guard number > 1 else { return [] }
        let count = number / 7 + 2
        let step = (number * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        return [6] + (0..<count - 1).map { size - 7 - (count - 2 - $0) * step }
    }

    /// The smallest version that holds `bytes` bytes at `correction`; nil when none up to 20 does.
    static func smallest(holding bytes: Int, _ correction: QRErrorCorrection) -> QRVersion? {
        range.lazy.map(QRVersion.init(number:)).first { $0.byteCapacity(correction) >= bytes }
    }
}
