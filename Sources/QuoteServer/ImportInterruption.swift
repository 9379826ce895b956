import Foundation
import Logging
import Synchronization

/// Ctrl-C (SIGINT) or SIGTERM during an import: the first stops it after the batch in flight commits, so that the
/// import ends at a batch it can resume after and says so; a second ends the process at once (the batch in flight
/// then rolls back whole, as when the connection is lost).
final class ImportInterruption: Sendable {
    struct Interrupted: Error {
        let signal: Int32
    }

    private let received = Mutex<Int32?>(nil)
    private let watcher = SignalWatcher(signals: [SIGINT, SIGTERM])

    init(logger: Logger) {
        Task.detached { [self] in
            let first = await watcher.next()
            received.withLock { $0 = first }
            logger.warning("stopping the import after the batch in flight commits; a second signal stops it now")
            let second = await watcher.next()
            exit(128 + second)
        }
    }

    /// Throws `Interrupted` once a signal has arrived.
    func check() throws {
        if let signal = received.withLock({ $0 }) { throw Interrupted(signal: signal) }
    }
}
