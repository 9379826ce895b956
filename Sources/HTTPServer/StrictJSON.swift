/// A validator for RFC 8259 JSON text, run before a body is decoded: Foundation's decoder on Linux accepts more
/// than the grammar (a trailing comma in an object or array, for one), and a request body must be strict.
///
/// One pass, no allocation per value, nesting bounded by an explicit stack (no recursion to overflow).
enum StrictJSON {
    /// Deeper nesting is refused as invalid: no API body comes near it.
    static let maximumDepth = 512

    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            return scanner.document()
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        private mutating func consume(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// The whole text: one value, surrounded by whitespace only.
        mutating func document() -> Bool {
            // Open containers: true for an object, false for an array.
            var stack: [Bool] = []
            skipWhitespace()
            while true {
                // At the start of a value.
                guard let byte = current else { return false }
                switch byte {
                case UInt8(ascii: "{"):
                    index += 1
                    skipWhitespace()
                    if consume(UInt8(ascii: "}")) { break }
                    guard stack.count < StrictJSON.maximumDepth, key() else { return false }
                    stack.append(true)
                    skipWhitespace()
                    continue
                case UInt8(ascii: "["):
                    index += 1
                    skipWhitespace()
                    if consume(UInt8(ascii: "]")) { break }
                    guard stack.count < StrictJSON.maximumDepth else { return false }
                    stack.append(false)
                    continue
                case UInt8(ascii: "\""):
                    guard string() else { return false }
                case UInt8(ascii: "t"):
                    guard literal("true") else { return false }
                case UInt8(ascii: "f"):
                    guard literal("false") else { return false }
                case UInt8(ascii: "n"):
                    guard literal("null") else { return false }
                default:
                    guard number() else { return false }
                }
                // After a complete value: close containers or move to the next member/element.
                while true {
                    skipWhitespace()
                    guard let isObject = stack.last else {
                        return index == bytes.count
                    }
                    if consume(UInt8(ascii: ",")) {
                        skipWhitespace()
                        if isObject {
                            guard key() else { return false }
                            skipWhitespace()
                        }
                        break  // a value must follow: a trailing comma fails there
                    }
                    guard consume(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                    stack.removeLast()
                }
            }
        }

        /// `"name"` then `:` (the value follows).
        private mutating func key() -> Bool {
            guard current == UInt8(ascii: "\""), string() else { return false }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            return true
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        private static func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        private mutating func number() -> Bool {
            _ = consume(UInt8(ascii: "-"))
            guard let first = current, Self.isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { digits() }
            if consume(UInt8(ascii: ".")) {
                guard let byte = current, Self.isDigit(byte) else { return false }
                digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let byte = current, Self.isDigit(byte) else { return false }
                digits()
            }
            return true
        }

        private mutating func digits() {
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }

        /// A string: no raw control characters, only the escapes the grammar lists, valid UTF-8.
        private mutating func string() -> Bool {
            index += 1  // the opening quote
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { return false }
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        guard bytes.count - index > 4 else { return false }
                        for offset in 1...4 where !Self.isHexDigit(bytes[index + offset]) { return false }
                        index += 5
                    default:
                        return false
                    }
                case 0..<0x20:
                    return false
                case 0x80...:
                    guard utf8Sequence() else { return false }
                default:
                    index += 1
                }
            }
            return false
        }

        /// One multi-byte UTF-8 sequence (no overlong forms, surrogates or values past U+10FFFF).
        private mutating func utf8Sequence() -> Bool {
            let lead = bytes[index]
            let length: Int
            var lower: UInt8 = 0x80, upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return false
            }
            guard bytes.count - index >= length else { return false }
            let second = bytes[index + 1]
            guard second >= lower, second <= upper else { return false }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
            return true
        }
    }
}
