import Foundation
import HTTPServer
import Logging

/// `LOG_FORMAT=text`: one readable line per event, for people at a terminal.
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level

    public init(label: String, level: Logger.Level) { self.logLevel = level }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// `<timestamp> <LEVEL> <message>`: the start of every text line.
    static func prefix(_ level: Logger.Level, _ message: String) -> String {
        "\(Timestamp.format(Date())) \(level.rawValue.uppercased()) \(message)"
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = merged.keys.sorted().map { "\($0)=\(merged[$0]!)" }.joined(separator: " ")
        LogSink.standardError.write(
            Array("\(Self.prefix(event.level, event.message.description)) \(fields)\n".utf8),
            urgent: event.level >= .warning)
    }
}
