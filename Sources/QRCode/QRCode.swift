/// A QR code (model 2) of some bytes in byte mode, at the smallest version 1...20 that holds them, with the
/// mask that scores lowest. Built entirely here, so a page can show it as SVG with no script and no service.
public struct QRCode: Sendable {
    /// Modules per side (21 for version 1, 4 more per version).
    public let size: Int
    public let version: Int
    public let mask: Int
    private let dark: [Bool]

    /// Bytes that no version up to 20 holds at the level chosen.
    public struct TooLong: Error, Sendable {
        public let bytes: Int
    }

    public init(bytes: [UInt8], correction: QRErrorCorrection = .medium) throws {
        guard let version = QRVersion.smallest(holding: bytes.count, correction) else {
            throw TooLong(bytes: bytes.count)
        }
        var matrix = QRMatrix(version: version)
        matrix.place(QRCodewords.of(bytes, version: version, correction: correction))
        var best: (mask: QRMask, penalty: Int)?
        for mask in QRMask.all {
            matrix.apply(mask)
            matrix.drawFormat(correction: correction, mask: mask.number)
            let penalty = QRPenalty.of(matrix)
            if penalty < best?.penalty ?? .max { best = (mask, penalty) }
            matrix.apply(mask)  // undone: the next mask starts from the plain data
        }
        let chosen = best?.mask ?? QRMask(number: 0)
        matrix.apply(chosen)
        matrix.drawFormat(correction: correction, mask: chosen.number)
        size = matrix.size
        self.version = version.number
        mask = chosen.number
        dark = (0..<size * size).map { matrix[$0 % matrix.size, $0 / matrix.size] }
    }

    public init(text: String, correction: QRErrorCorrection = .medium) throws {
        try self.init(bytes: Array(text.utf8), correction: correction)
    }

    /// Whether the module at `column`, `row` (from the top left, 0-based) is dark.
    public subscript(column: Int, row: Int) -> Bool { dark[row * size + column] }
}
