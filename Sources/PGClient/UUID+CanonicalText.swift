import Foundation

extension UUID {
    /// Parses the 36-character 8-4-4-4-12 hex form (either case), as `UUID(uuidString:)` does. Foundation's goes
    /// through `sscanf`, which was the largest cost of decoding a result of thousands of ids, and showed in the
    /// profile of every route with an id in its path.
    public init?(canonicalText text: String) {
        var text = text
        let parsed: uuid_t? = text.withUTF8 { utf8 in
            guard utf8.count == 36 else { return nil }
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let complete = withUnsafeMutableBytes(of: &value) { out -> Bool in
                var input = 0
                for output in 0..<16 {
                    if input == 8 || input == 13 || input == 18 || input == 23 {
                        guard utf8[input] == UInt8(ascii: "-") else { return false }
                        input += 1
                    }
                    guard let high = hexValue(utf8[input]), let low = hexValue(utf8[input + 1]) else {
                        return false
                    }
                    out[output] = high << 4 | low
                    input += 2
                }
                return true
            }
            return complete ? value : nil
        }
        guard let parsed else { return nil }
        self.init(uuid: parsed)
    }

    /// The lower-case 8-4-4-4-12 form, written from the bytes: `uuidString` formats with `snprintf` (it showed
    /// in the profile of every statement with an id parameter) and is upper-case.
    public var canonicalText: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var position = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = digits.utf8Start[Int(byte >> 4)]
                    out[position + 1] = digits.utf8Start[Int(byte & 0xf)]
                    position += 2
                }
                return position
            }
        }
    }
}
