import Foundation
import HTTPServer
import Logging

/// Writes one JSON object per line to standard error: `{"ts":…,"level":…,"msg":…, metadata…}`.
/// Callers never pass secrets as metadata; this handler does not try to guess them.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    private let label: String

    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = "{\"ts\":\"" + Self.timestamp() + "\",\"level\":\"" + event.level.rawValue + "\",\"msg\":"
        Self.appendQuoted(event.message.description, to: &line)
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for key in merged.keys.sorted() {
            line += ","
            Self.appendQuoted(key, to: &line)
            line += ":"
            Self.appendValue(merged[key]!, to: &line)
        }
        line += "}\n"
        StandardError.write(line)
    }

    private static func appendValue(_ value: Logger.Metadata.Value, to line: inout String) {
        switch value {
        case .string(let string): appendQuoted(string, to: &line)
        case .stringConvertible(let convertible):
            if let number = convertible as? any BinaryInteger { line += "\(number)" } else { appendQuoted(convertible.description, to: &line) }
        case .array(let values):
            line += "["
            for (index, element) in values.enumerated() {
                if index > 0 { line += "," }
                appendValue(element, to: &line)
            }
            line += "]"
        case .dictionary(let dictionary):
            line += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { line += "," }
                appendQuoted(key, to: &line)
                line += ":"
                appendValue(dictionary[key]!, to: &line)
            }
            line += "}"
        }
    }

    static func appendQuoted(_ string: String, to line: inout String) {
        line += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20:
                line += String(format: "\\u%04x", scalar.value)
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Timestamp.format(Date(timeIntervalSince1970: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9))
    }
}

/// Line-at-a-time writes to fd 2: one `write` per line keeps concurrent lines whole.
enum StandardError {
    static func write(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
