import Foundation

// bytea: sent in binary format (no escaping, no size blow-up), read back from the
// text format's hex form ("\x0a1b..."), which is the server default (bytea_output = hex).

extension Data: PGEncodable, PGDecodable {
    public static var pgType: PGType { .bytea }
    public func pgEncode() -> PGBind.Value { .binary([UInt8](self)) }
    public init(pgText text: String) throws(PGError) {
        self = Data(try decodeByteaHex(text))
    }
}

/// `[UInt8]` is bytea; see `PGArrayElement` for why this goes through `UInt8`.
extension UInt8: PGInteger, PGArrayElement {
    /// A lone byte is sent as a smallint.
    public static var pgType: PGType { .int2 }

    public static var pgArrayType: PGType { .bytea }
    public static func pgEncodeArray(_ elements: [UInt8]) -> PGBind.Value { .binary(elements) }
    public static func pgDecodeArray(_ text: String) throws(PGError) -> [UInt8] {
        try decodeByteaHex(text)
    }
}

/// Decodes bytea's hex output format.
func decodeByteaHex(_ text: String) throws(PGError) -> [UInt8] {
    // Contiguous storage makes this a tight loop; 1 MB blobs are 2 MB of hex.
    let result =
        text.utf8.withContiguousStorageIfAvailable(hexBytes)
        ?? Array(text.utf8).withUnsafeBufferPointer(hexBytes)
    guard let result else { throw .decodingFailure([UInt8].self, text) }
    return result
}

private func hexBytes(_ chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    // "\x" prefix, then two hex digits per byte.
    guard chars.count >= 2, chars[0] == UInt8(ascii: "\\"), chars[1] == UInt8(ascii: "x"),
        chars.count % 2 == 0
    else { return nil }
    var bytes = [UInt8]()
    bytes.reserveCapacity((chars.count - 2) / 2)
    var index = 2
    while index < chars.count {
        guard let high = hexValue(chars[index]), let low = hexValue(chars[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
        index += 2
    }
    return bytes
}

/// The value of a hexadecimal digit in either case (also for `UUID(canonicalText:)`).
func hexValue(_ char: UInt8) -> UInt8? {
    switch char {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
    default: nil
    }
}
