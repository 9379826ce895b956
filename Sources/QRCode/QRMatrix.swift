/// The square of modules being built: the function patterns (finders, timing, alignment, format and version
/// information), then the codewords placed in the zigzag of ISO/IEC 18004 7.7.3 around them.
struct QRMatrix: Sendable {
    let version: QRVersion
    let size: Int
    /// Row-major; true is dark.
    private(set) var dark: [Bool]
    /// Modules of function patterns, which masks leave alone.
    private(set) var isFunction: [Bool]

    init(version: QRVersion) {
        self.version = version
        size = version.size
        dark = Array(repeating: false, count: size * size)
        isFunction = Array(repeating: false, count: size * size)
        drawFunctionPatterns()
    }

    subscript(column: Int, row: Int) -> Bool { dark[row * size + column] }

    func isFunction(column: Int, row: Int) -> Bool { isFunction[row * size + column] }

    private mutating func setFunction(_ column: Int, _ row: Int, _ value: Bool) {
        dark[row * size + column] = value
        isFunction[row * size + column] = true
    }

    private mutating func drawFunctionPatterns() {
        for index in 0..<size {
            setFunction(6, index, index % 2 == 0)
            setFunction(index, 6, index % 2 == 0)
        }
        for (column, row) in [(3, 3), (size - 4, 3), (3, size - 4)] { drawFinder(column, row) }
        let centres = version.alignmentCentres
        for (i, column) in centres.enumerated() {
            for (j, row) in centres.enumerated() {
                let last = centres.count - 1
                // Not over the three finders.
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                drawAlignment(column, row)
            }
        }
        drawFormat(correction: .medium, mask: 0)  // reserves the modules; drawn again once the mask is chosen
        drawVersion()
    }

    /// A finder and its light separator: dark 7×7 ring, light ring, dark 3×3 centre.
    private mutating func drawFinder(_ column: Int, _ row: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let (x, y) = (column + dx, row + dy)
                guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                let distance = max(abs(dx), abs(dy))
                setFunction(x, y, distance != 2 && distance != 4)
            }
        }
    }

    private mutating func drawAlignment(_ column: Int, _ row: Int) {
        for dy in -2...2 {
            for dx in -2...2 { setFunction(column + dx, row + dy, max(abs(dx), abs(dy)) != 1) }
        }
    }

    /// The 15 format bits (level and mask, BCH(15,5) protected, XOR 0x5412) in both of their places, and the
    /// dark module beside the lower-left finder.
    mutating func drawFormat(correction: QRErrorCorrection, mask: Int) {
        let data = correction.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { setFunction(8, index, bit(index)) }
        setFunction(8, 7, bit(6))
        setFunction(8, 8, bit(7))
        setFunction(7, 8, bit(8))
        for index in 9..<15 { setFunction(14 - index, 8, bit(index)) }
        for index in 0..<8 { setFunction(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { setFunction(8, size - 15 + index, bit(index)) }
        setFunction(8, size - 8, true)
    }

    /// From version 7: the 18 version bits (BCH(18,6) protected) beside the upper-right and lower-left finders.
    private mutating func drawVersion() {
        guard version.number >= 7 else { return }
        var remainder = version.number
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        let bits = version.number << 12 | remainder
        for index in 0..<18 {
            let bit = (bits >> index) & 1 == 1
            let (long, short) = (size - 11 + index % 3, index / 3)
            setFunction(long, short, bit)
            setFunction(short, long, bit)
        }
    }

    /// Places the codewords, most significant bit first, in two-module-wide columns from the right, up then
    /// down, skipping function modules and the vertical timing column; modules left over stay light.
    mutating func place(_ codewords: [UInt8]) {
        var bitIndex = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = (right + 1) & 2 == 0
            for step in 0..<size {
                let row = upward ? size - 1 - step : step
                for column in [right, right - 1] where !isFunction[row * size + column] {
                    if bitIndex < codewords.count * 8 {
                        dark[row * size + column] = (codewords[bitIndex >> 3] >> (7 - bitIndex & 7)) & 1 == 1
                        bitIndex += 1
                    }
                }
            }
            right -= 2
        }
    }

    /// Inverts the data modules where `mask` says so (applying it twice undoes it).
    mutating func apply(_ mask: QRMask) {
        for row in 0..<size {
            for column in 0..<size where !isFunction[row * size + column] && mask.inverts(column: column, row: row) {
                dark[row * size + column].toggle()
            }
        }
    }
}
