import Logging
import Synchronization

/// Keeps every message logged through `logger()` at `level` or above, for a test to read.
public final class LogCapture: Sendable {
    private let messages = Mutex<[String]>([])
    private let level: Logger.Level

    public init(level: Logger.Level) { self.level = level }

    public var all: [String] { messages.withLock { $0 } }

    public func logger() -> Logger {
        var logger = Logger(label: "test") { _ in Handler(sink: self, logLevel: self.level) }
        logger.logLevel = level
        return logger
    }

    struct Handler: LogHandler {
        let sink: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            sink.messages.withLock { $0.append(event.message.description) }
        }
    }
}
