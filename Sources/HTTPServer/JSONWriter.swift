import Foundation

/// Writes JSON straight into bytes. For the hot list routes, where `JSONEncoder` cost more than the
/// database query; everything else uses `Response.json(_:)`.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    /// Appends raw, already valid JSON.
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func raw(bytes other: [UInt8]) { bytes.append(contentsOf: other) }

    /// `"key":` — keys are our own field names and never need escaping.
    public mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))  // (not an array literal: that allocated on every key)
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        // Copies runs of plain bytes at once; only quotes, backslashes and control characters are escaped, and a
        // U+FEFF that would begin a run.
        value.withUTF8 { utf8 in
            var runStart = escapeByteOrderMarks(utf8, from: 0)
            for index in utf8.indices[runStart...] {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscaped(byte)
                runStart = escapeByteOrderMarks(utf8, from: index + 1)  // (the loop steps over them: none is escaped)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A U+FEFF is valid raw, but Foundation's `JSONSerialization` takes one that begins a run of raw bytes (at a
    /// string's start or just after an escape) for a byte order mark and drops it; `\ufeff` reads back everywhere.
    /// Returns where the raw run starts.
    @inline(__always)
    private mutating func escapeByteOrderMarks(_ utf8: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var start = start
        // (The first byte is tested alone first: that is all a run of plain text pays.)
        while start < utf8.count, utf8[start] == 0xEF, utf8.count - start >= 3, utf8[start + 1] == 0xBB,
            utf8[start + 2] == 0xBF
        {
            bytes.append(contentsOf: Array(#"\ufeff"#.utf8))
            start += 3
        }
        return start
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0..<0x20:
            bytes.append(contentsOf: Array(#"\u00"#.utf8))
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0xf))
        default: bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Lower-case 8-4-4-4-12, written from the bytes: `uuidString` formats with `sprintf` and was the hot spot
    /// of id lists (measured in bench/library.sh). Composed on the stack and appended once.
    public mutating func uuid(_ value: UUID) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { out in
            out[0] = UInt8(ascii: "\"")
            var position = 1
            withUnsafeBytes(of: value.uuid) { raw in
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = Self.hexDigit(byte >> 4)
                    out[position + 1] = Self.hexDigit(byte & 0xf)
                    position += 2
                }
            }
            out[37] = UInt8(ascii: "\"")
            bytes.append(contentsOf: out)
        }
    }

    public mutating func timestamp(_ value: Date) {
        bytes.append(UInt8(ascii: "\""))
        Timestamp.write(value, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int(_ value: Int) { bytes.append(contentsOf: String(value).utf8) }

    /// A finite number, as Swift prints it (`0.25`).
    public mutating func double(_ value: Double) { bytes.append(contentsOf: value.description.utf8) }

    public mutating func int(_ value: Int?) {
        if let value { int(value) } else { null() }
    }

    public mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    public mutating func null() { raw("null") }

    public mutating func comma() { bytes.append(UInt8(ascii: ",")) }

    /// `[a,b,c]` with `write` called for each element.
    public mutating func array<C: Collection>(_ elements: C, _ write: (inout JSONWriter, C.Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { comma() }
            first = false
            write(&self, element)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
