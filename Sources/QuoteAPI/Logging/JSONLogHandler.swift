import Foundation
import HTTPServer
import Logging

/// Writes one JSON object per line to standard error: `{"ts":…,"level":…,"msg":…, metadata…}`.
/// Callers never pass secrets as metadata; this handler does not try to guess them.
///
/// The line is built as bytes (`JSONWriter`), not as a `String`: it runs once per request, and string appends were
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
    static func openLine(_ level: Logger.Level, _ message: String) -> JSONWriter {
        var line = JSONWriter(capacity: 256)
        line.raw("{")
        line.key("ts"); line.timestamp(Date()); line.comma()
        line.key("level"); line.string(level.rawValue); line.comma()
        line.key("msg"); line.string(message)
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
            line.comma()
            Self.write(key, merged[key]!, to: &line)
        }
        line.raw("}\n")
        LogSink.standardError.write(line.bytes, urgent: event.level >= .warning)
    }

    /// `"key":value`; numbers stay numbers in the JSON line.
    private static func write(_ key: String, _ value: Logger.Metadata.Value, to line: inout JSONWriter) {
        line.string(key)
        line.raw(":")
        write(value, to: &line)
    }

    private static func write(_ value: Logger.Metadata.Value, to line: inout JSONWriter) {
        switch value {
        case .string(let string): line.string(string)
        case .stringConvertible(let convertible as Int): line.int(convertible)
        case .stringConvertible(let convertible as Double) where convertible.isFinite: line.double(convertible)
        case .stringConvertible(let convertible): line.string(convertible.description)
        case .array(let values): line.array(values) { write($1, to: &$0) }
        case .dictionary(let dictionary):
            line.raw("{")
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { line.comma() }
                write(key, dictionary[key]!, to: &line)
            }
            line.raw("}")
        }
    }
}
