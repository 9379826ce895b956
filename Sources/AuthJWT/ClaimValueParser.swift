/// JSON text (RFC 8259) read straight into a `ClaimValue`, in one pass over its UTF-8 bytes.
///
/// `JSONDecoder` can only decode a `ClaimValue` by trying each case in turn, and every miss builds a `DecodingError`:
/// a Realtime heartbeat's decode cost more than the rest of its answer together. This reader is strict where that
/// decoder is: no trailing commas, no leading zeros, no control characters or invalid UTF-8 in strings, no unpaired
/// surrogate escapes, no number too large for a `Double`, nothing after the value but whitespace. A repeated key keeps
/// its last value.
extension ClaimValue {
    /// Deeper nesting is refused: no message or body comes near it, and the reader recurses once per level.
    public static let maximumJSONDepth = 512

    public struct JSONTextError: Error, Equatable {
        /// The byte offset where the text stopped being JSON.
        public let offset: Int
    }

    public init(jsonText text: String) throws(JSONTextError) {
        var text = text
        let parsed = text.withUTF8 { bytes in
            Result { () throws(JSONTextError) in try ClaimValue(jsonUTF8: bytes) }
        }
        self = try parsed.get()
    }

    public init(jsonBytes bytes: [UInt8]) throws(JSONTextError) {
        self = try bytes.withUnsafeBufferPointer { bytes throws(JSONTextError) in try ClaimValue(jsonUTF8: bytes) }
    }

    public init(jsonUTF8 bytes: UnsafeBufferPointer<UInt8>) throws(JSONTextError) {
        var reader = JSONTextReader(bytes: bytes)
        reader.skipWhitespace()
        let value = try reader.value(depth: 1)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.failure }
        self = value
    }
}

private struct JSONTextReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var failure: ClaimValue.JSONTextError { ClaimValue.JSONTextError(offset: index) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ literal: StaticString) throws(ClaimValue.JSONTextError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count,
            (0..<count).allSatisfy({ bytes[index + $0] == literal.utf8Start[$0] })
        else { throw failure }
        index += count
    }

    mutating func value(depth: Int) throws(ClaimValue.JSONTextError) -> ClaimValue {
        guard let byte = current else { throw failure }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth <= ClaimValue.maximumJSONDepth else { throw failure }
            return .object(try object(depth: depth))
        case UInt8(ascii: "["):
            guard depth <= ClaimValue.maximumJSONDepth else { throw failure }
            return .array(try array(depth: depth))
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        default:
            return .number(try number())
        }
    }

    private mutating func object(depth: Int) throws(ClaimValue.JSONTextError) -> [String: ClaimValue] {
        index += 1  // {
        var fields: [String: ClaimValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return fields
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw failure }
            let key = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure }
            index += 1
            skipWhitespace()
            fields[key] = try value(depth: depth + 1)
            if try closes(UInt8(ascii: "}")) { return fields }
        }
    }

    private mutating func array(depth: Int) throws(ClaimValue.JSONTextError) -> [ClaimValue] {
        index += 1  // [
        var items: [ClaimValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return items
        }
        while true {
            items.append(try value(depth: depth + 1))
            if try closes(UInt8(ascii: "]")) { return items }
        }
    }

    /// After a member: true at the container's closing bracket, false after a comma (the next member follows).
    private mutating func closes(_ bracket: UInt8) throws(ClaimValue.JSONTextError) -> Bool {
        skipWhitespace()
        guard let byte = current, byte == bracket || byte == UInt8(ascii: ",") else { throw failure }
        index += 1
        skipWhitespace()
        return byte == bracket
    }

    /// A string from its opening quote: runs without escapes are taken whole (and must be valid UTF-8).
    private mutating func string() throws(ClaimValue.JSONTextError) -> String {
        index += 1  // "
        var text = ""
        var runStart = index
        while true {
            guard let byte = current else { throw failure }
            switch byte {
            case UInt8(ascii: "\""):
                try appendRun(from: runStart, to: &text)
                index += 1
                return text
            case UInt8(ascii: "\\"):
                try appendRun(from: runStart, to: &text)
                index += 1
                try escape(into: &text)
                runStart = index
            case 0..<0x20:
                throw failure
            default:
                index += 1
            }
        }
    }

    private func appendRun(from start: Int, to text: inout String) throws(ClaimValue.JSONTextError) {
        guard start < index else { return }
        guard let run = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        else { throw ClaimValue.JSONTextError(offset: start) }
        text += run
    }

    private mutating func escape(into text: inout String) throws(ClaimValue.JSONTextError) {
        guard let byte = current else { throw failure }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): text += "\""
        case UInt8(ascii: "\\"): text += "\\"
        case UInt8(ascii: "/"): text += "/"
        case UInt8(ascii: "b"): text += "\u{08}"
        case UInt8(ascii: "f"): text += "\u{0C}"
        case UInt8(ascii: "n"): text += "\n"
        case UInt8(ascii: "r"): text += "\r"
        case UInt8(ascii: "t"): text += "\t"
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            var scalar: Unicode.Scalar?
            switch unit {
            case 0xD800..<0xDC00:
                // A high surrogate must be followed by an escaped low one.
                try expect("\\u")
                let low = try hexUnit()
                guard (0xDC00..<0xE000).contains(low) else { throw failure }
                scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00..<0xE000:
                throw failure
            default:
                scalar = Unicode.Scalar(unit)
            }
            guard let scalar else { throw failure }
            text.unicodeScalars.append(scalar)
        default:
            throw failure
        }
    }

    private mutating func hexUnit() throws(ClaimValue.JSONTextError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure
            }
            unit = unit << 4 | UInt32(digit)
            index += 1
        }
        return unit
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, as a finite `Double`.
    private mutating func number() throws(ClaimValue.JSONTextError) -> Double {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw failure }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, isDigit(byte) else { throw failure }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw failure }
            skipDigits()
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else { throw ClaimValue.JSONTextError(offset: start) }
        return number
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }
}
