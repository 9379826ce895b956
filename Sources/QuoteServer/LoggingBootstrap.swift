import Foundation
import QuoteAPI
import Logging

/// swift-log allows one bootstrap per process.
enum LoggingBootstrap {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var done = false

    static func once(level: Logger.Level, format: LogFormat) {
        lock.withLock {
            guard !done else { return }
            done = true
            LoggingSetup.bootstrap(level: level, format: format)
        }
    }
}
