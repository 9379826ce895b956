import Foundation
import QuoteAPI
import Logging
import Synchronization

/// swift-log allows one bootstrap per process.
enum LoggingBootstrap {
    private static let done = Mutex(false)

    static func once(level: Logger.Level, format: LogFormat) {
        done.withLock { done in
            guard !done else { return }
            done = true
            LoggingSetup.bootstrap(level: level, format: format)
        }
    }
}
