/// Base64 without `=` padding, over either alphabet, decoding strictly.
///
/// Strict means canonical: every character must be in the alphabet, the length
/// may not leave a lone 6-bit group, and the unused low bits of the last
/// character must be zero. Without that last rule two different strings decode
/// to the same bytes, so a JWT signature could be altered and still verify.
struct UnpaddedBase64: Sendable {
    /// RFC 4648 §5 (`-`, `_`): JWTs and opaque tokens.
    static let url = UnpaddedBase64(alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    /// RFC 4648 §4 (`+`, `/`): the "B64" of PHC strings.
    static let standard = UnpaddedBase64(alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

    private let encodeTable: [UInt8]
    /// Maps a byte to its 6-bit value, or 0xFF when not in the alphabet.
    private let decodeTable: [UInt8]

    private init(alphabet: String) {
        encodeTable = Array(alphabet.utf8)
        precondition(encodeTable.count == 64)
        var decode = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in encodeTable.enumerated() { decode[Int(symbol)] = UInt8(value) }
        decodeTable = decode
    }

    func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(encodeTable[Int(chunk >> 18 & 63)])
            out.append(encodeTable[Int(chunk >> 12 & 63)])
            out.append(encodeTable[Int(chunk >> 6 & 63)])
            out.append(encodeTable[Int(chunk & 63)])
            index += 3
        }
        // One or two bytes left: two or three characters.
        let left = input.count - index
        if left > 0 {
            let chunk = UInt32(input[index]) << 16 | (left == 2 ? UInt32(input[index + 1]) << 8 : 0)
            for shift in stride(from: 18, through: 18 - 6 * left, by: -6) {
                out.append(encodeTable[Int(chunk >> UInt32(shift) & 63)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The decoded bytes, or nil if `text` is not canonical unpadded base64.
    func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        // Over contiguous bytes (a native string's UTF-8, an array) the loop is specialised; a generic collection's
        // iterator cost a cursor page about a microsecond.
        if let decoded = text.withContiguousStorageIfAvailable({ decode(contiguous: $0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decode(contiguous: $0) }
    }

    private func decode(contiguous text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var values = [UInt8]()
        values.reserveCapacity(text.count)
        for symbol in text {
            let value = decodeTable[Int(symbol)]
            guard value != 0xFF else { return nil }
            values.append(value)
        }
        let tail = values.count % 4
        guard tail != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(values.count / 4 * 3 + 2)
        var index = 0
        while index + 4 <= values.count {
            let chunk =
                UInt32(values[index]) << 18 | UInt32(values[index + 1]) << 12
                | UInt32(values[index + 2]) << 6 | UInt32(values[index + 3])
            out.append(UInt8(chunk >> 16 & 0xFF))
            out.append(UInt8(chunk >> 8 & 0xFF))
            out.append(UInt8(chunk & 0xFF))
            index += 4
        }
        switch tail {
        case 2:
            guard values[index + 1] & 0x0F == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
        case 3:
            guard values[index + 2] & 0x03 == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
            out.append(values[index + 1] << 4 | values[index + 2] >> 2)
        default:
            break
        }
        return out
    }
}
