import Foundation
import HTTPServer
import Logging

/// Writes one JSON object per line to standard error: `{"ts":…,"level":…,"msg":…, metadata…}`.
/// Callers never pass secrets as metadata; this handler does not try to guess them.
///
/// The line is built as bytes, not as a `String`: it runs once per request, and string appends were
/// the largest cost of the fastest routes.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level

    public init(label: String, level: Logger.Level) {
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// `{"ts":…,"level":…,"msg":…`: the start of every JSON line, left open for the metadata.
    static func openLine(_ level: Logger.Level, _ message: String) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: #"{"ts":""#.utf8)
        Timestamp.write(Date(), into: &line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: level.rawValue.utf8)
        line.append(contentsOf: #"","msg":"#.utf8)
        appendQuoted(message, to: &line)
        return line
    }

    public func log(event: LogEvent) {
        var line = Self.openLine(event.level, event.message.description)
        // Most lines carry only the event's own metadata: skip the merge then.
        var merged = event.metadata ?? [:]
        if !metadata.isEmpty || metadataProvider != nil {
            merged = metadata
            if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
            if let extra = event.metadata { merged.merge(extra) { $1 } }
        }
        for key in merged.keys.sorted() {
            line.append(UInt8(ascii: ","))
            Self.appendQuoted(key, to: &line)
            line.append(UInt8(ascii: ":"))
            Self.appendValue(merged[key]!, to: &line)
        }
        line.append(contentsOf: "}\n".utf8)
        LogSink.standardError.write(line, urgent: event.level >= .warning)
    }

    private static func appendValue(_ value: Logger.Metadata.Value, to line: inout [UInt8]) {
        switch value {
        case .string(let string):
            appendQuoted(string, to: &line)
        case .stringConvertible(let convertible):
            // Numbers stay numbers in the JSON line.
            if let number = convertible as? Int {
                line.append(contentsOf: String(number).utf8)
            } else if let number = convertible as? Double, number.isFinite {
                line.append(contentsOf: number.description.utf8)
            } else {
                appendQuoted(convertible.description, to: &line)
            }
        case .array(let values):
            line.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                appendValue(element, to: &line)
            }
            line.append(UInt8(ascii: "]"))
        case .dictionary(let dictionary):
            line.append(UInt8(ascii: "{"))
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                appendQuoted(key, to: &line)
                line.append(UInt8(ascii: ":"))
                appendValue(dictionary[key]!, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `string` as a JSON string literal, escaping quotes, backslashes and control characters.
    static func appendQuoted(_ string: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "\""))
        // Fast path: nothing to escape, which is nearly always the case.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            line.append(contentsOf: string.utf8)
            line.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): line.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): line.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): line.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): line.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): line.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                line.append(contentsOf: #"\u00"#.utf8)
                line.append(hex[Int(byte >> 4)])
                line.append(hex[Int(byte & 0xf)])
            default:
                line.append(byte)
            }
        }
        line.append(UInt8(ascii: "\""))
    }
}
