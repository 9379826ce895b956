import Foundation
import QuoteAPI
import Logging
import Synchronization

/// swift-log allows one bootstrap per process: the first call installs the handler of `format`.
enum LoggingBootstrap {
    private static let done = Mutex(false)

    static func once(level: Logger.Level, format: LogFormat) {
        done.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                switch format {
                case .text: TextLogHandler(label: label, level: level)
                case .json: JSONLogHandler(label: label, level: level)
                }
            }
        }
    }
}
