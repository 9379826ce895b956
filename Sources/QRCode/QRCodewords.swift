/// The codewords a QR code carries for some bytes: byte mode's header, the bytes, the terminator and padding,
/// split into blocks, each followed by its Reed–Solomon codewords, interleaved (ISO/IEC 18004 7.4–7.6).
enum QRCodewords {
    static func of(_ bytes: [UInt8], version: QRVersion, correction: QRErrorCorrection) -> [UInt8] {
        interleaved(data(bytes, version: version, correction: correction), version: version, correction: correction)
    }

    /// Mode 0100 (bytes), the count, the bytes, up to four 0 bits, 0 bits to a whole byte, then 0xEC 0x11 … to
    /// fill the version's data codewords.
    static func data(_ bytes: [UInt8], version: QRVersion, correction: QRErrorCorrection) -> [UInt8] {
        let capacity = version.dataCodewords(correction) * 8
        var bits: [Bool] = []
        bits.reserveCapacity(capacity)
        func append(_ value: Int, _ count: Int) {
            for shift in (0..<count).reversed() { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, version.byteCountBits)
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var codewords = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while codewords.count < version.dataCodewords(correction) {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// The data split into the version's blocks (the later ones a codeword longer when they do not divide
    /// evenly), then the first codeword of each block, the second of each, …, then their error correction alike.
    static func interleaved(_ data: [UInt8], version: QRVersion, correction: QRErrorCorrection) -> [UInt8] {
        let blockCount = correction.blocks[version.number - 1]
        let eccLength = correction.codewordsPerBlock[version.number - 1]
        let shortBlocks = blockCount - version.totalCodewords % blockCount
        let shortLength = version.totalCodewords / blockCount - eccLength
        let code = ReedSolomon(degree: eccLength)
        var blocks: [[UInt8]] = []
        var start = 0
        for index in 0..<blockCount {
            let length = shortLength + (index < shortBlocks ? 0 : 1)
            blocks.append(Array(data[start..<start + length]))
            start += length
        }
        let corrections = blocks.map(code.remainder(of:))
        var result: [UInt8] = []
        result.reserveCapacity(version.totalCodewords)
        for position in 0...shortLength {
            for block in blocks where position < block.count { result.append(block[position]) }
        }
        for position in 0..<eccLength {
            for correction in corrections { result.append(correction[position]) }
        }
        return result
    }
}
