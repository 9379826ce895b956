import Foundation

/// A type whose Swift arrays map to one-dimensional PostgreSQL arrays, sent and read as
/// array literals (`{"a","b\"c",NULL}`) with every element quoted and escaped.
///
/// Swift allows `Array` only one conditional conformance to `PGEncodable`, so `[UInt8]`
/// (bytea) rides on this protocol too: `UInt8` overrides the two array hooks.
public protocol PGArrayElement: PGEncodable, PGDecodable {
    /// The array type sent for `[Self]`, e.g. `.uuidArray`.
    static var pgArrayType: PGType { get }
    /// Encodes `[Self]`; the default builds an array literal.
    static func pgEncodeArray(_ elements: [Self]) -> PGBind.Value
    /// Decodes `[Self]`; the default parses a one-dimensional array literal.
    static func pgDecodeArray(_ text: String) throws(PGError) -> [Self]
}

extension PGArrayElement {
    public static func pgEncodeArray(_ elements: [Self]) -> PGBind.Value {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal += "," }
            switch element.pgEncode() {
            case .null:
                literal += "NULL"
            case .text(let text):
                literal += quoteArrayElement(text)
            case .binary(let bytes):
                // Only bytea is binary, and arrays of bytea are not supported; send hex text.
                literal += quoteArrayElement("\\x" + bytes.map { String(format: "%02x", $0) }.joined())
            }
        }
        return .text(literal + "}")
    }

    public static func pgDecodeArray(_ text: String) throws(PGError) -> [Self] {
        guard let items = parseArrayLiteral(text) else { throw .decodingFailure([Self].self, text) }
        return try items.map { item throws(PGError) in
            if let item { try Self(pgText: item) } else { try Self.pgDecodeNull() }
        }
    }
}

extension Array: PGEncodable where Element: PGArrayElement {
    public static var pgType: PGType { Element.pgArrayType }
    public func pgEncode() -> PGBind.Value { Element.pgEncodeArray(self) }
}

extension Array: PGDecodable where Element: PGArrayElement {
    public init(pgText text: String) throws(PGError) { self = try Element.pgDecodeArray(text) }
}

extension String: PGArrayElement {
    /// Untyped like `String` itself, so `col = ANY(\(names))` adopts the column's array type.
    public static var pgArrayType: PGType { .unknown }
}
extension UUID: PGArrayElement { public static var pgArrayType: PGType { .uuidArray } }
extension Int: PGArrayElement { public static var pgArrayType: PGType { .int8Array } }
extension Int64: PGArrayElement { public static var pgArrayType: PGType { .int8Array } }
extension Int32: PGArrayElement { public static var pgArrayType: PGType { .int4Array } }
extension Int16: PGArrayElement { public static var pgArrayType: PGType { .int2Array } }

/// Always quotes, so elements that look like NULL, contain commas, braces, spaces or
/// quotes survive unchanged.
private func quoteArrayElement(_ text: String) -> String {
    var quoted = "\""
    for char in text.unicodeScalars {
        if char == "\"" || char == "\\" { quoted.unicodeScalars.append("\\") }
        quoted.unicodeScalars.append(char)
    }
    return quoted + "\""
}

/// Parses a one-dimensional array literal as PostgreSQL prints it; `nil` items are NULLs.
/// Returns nil for anything else (multi-dimensional arrays, explicit bounds, garbage).
func parseArrayLiteral(_ text: String) -> [String?]? {
    let chars = Array(text.utf8)
    guard chars.count >= 2, chars.first == UInt8(ascii: "{"), chars.last == UInt8(ascii: "}") else { return nil }
    if chars.count == 2 { return [] }
    var items = [String?]()
    var index = 1
    let end = chars.count - 1  // the closing brace
    while index <= end {
        var bytes = [UInt8]()
        // A quoted item ends at its closing quote, an unquoted one at a separator or the closing brace.
        let quoted = chars[index] == UInt8(ascii: "\"")
        if quoted { index += 1 }
        while index < end {
            let char = chars[index]
            if quoted ? char == UInt8(ascii: "\"") : char == UInt8(ascii: ",") { break }
            if !quoted, char == UInt8(ascii: "{") || char == UInt8(ascii: "\"") { return nil }
            if char == UInt8(ascii: "\\") {
                index += 1
                guard index < end else { return nil }
            }
            bytes.append(chars[index])
            index += 1
        }
        if quoted {
            guard index < end else { return nil }  // no closing quote
            index += 1
        }
        let item = String(decoding: bytes, as: UTF8.self)
        items.append(!quoted && item.uppercased() == "NULL" ? nil : item)
        // Now at a separator or the closing brace.
        guard index <= end else { return nil }
        if index == end { break }
        guard chars[index] == UInt8(ascii: ",") else { return nil }
        index += 1
        guard index < end else { return nil }  // a trailing comma
    }
    return items
}
