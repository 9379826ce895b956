import Foundation
import Logging
import Synchronization

/// Progress of a long backup or restore: a line rewritten in place on a terminal, a log line every ten seconds
/// otherwise.
final class BackupProgress: Sendable {
    private let label: String
    private let logger: Logger
    private let onTerminal = isatty(STDERR_FILENO) != 0
    private let state = Mutex((lastLogged: ContinuousClock.now, shown: false))

    init(_ label: String, logger: Logger) {
        self.label = label
        self.logger = logger
    }

    func report(share: Double, total: Int64) {
        let percent = Int((min(1, max(0, share)) * 100).rounded(.down))
        let text = "\(label): \(percent)% of \(Self.size(total))"
        state.withLock { state in
            if onTerminal {
                FileHandle.standardError.write(Data("\r\(text)\u{1B}[K".utf8))
                state.shown = true
            } else if ContinuousClock.now - state.lastLogged >= .seconds(10) {
                state.lastLogged = .now
                logger.info(
                    "progress",
                    metadata: [
                        "task": .string(label), "percent": .stringConvertible(percent),
                        "bytes": .stringConvertible(total),
                    ])
            }
        }
    }

    /// Ends the terminal line.
    func finish() {
        state.withLock { state in
            if state.shown { FileHandle.standardError.write(Data("\n".utf8)) }
            state.shown = false
        }
    }

    static func size(_ bytes: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: bytes, countStyle: .binary)
    }
}
