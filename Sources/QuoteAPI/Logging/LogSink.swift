import Foundation

/// Where log lines go: standard error, through a small buffer.
///
/// One `write(2)` per request line roughly halved the throughput of the fastest routes, so lines are
/// gathered and written at most every 50 ms or every 32 KiB, whichever comes first. Warnings and errors
/// flush at once, and `flush()` runs on shutdown, so what matters is never left in the buffer.
public final class LogSink: @unchecked Sendable {
    // @unchecked: `buffer` is guarded by `lock`.
    public static let standardError = LogSink(fileDescriptor: 2)

    private let fileDescriptor: Int32
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private var flusherStarted = false
    private static let flushThreshold = 32 * 1024

    /// A sink writing to `fileDescriptor` (tests give a pipe; the server uses `standardError`).
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        buffer.reserveCapacity(2 * Self.flushThreshold)
    }

    /// Appends a whole line (with its newline). `urgent` lines are written before this returns.
    func write(_ line: [UInt8], urgent: Bool) {
        lock.withLock {
            buffer.append(contentsOf: line)
            if urgent || buffer.count >= Self.flushThreshold {
                drainLocked()
            } else if !flusherStarted {
                flusherStarted = true
                startFlusher()
            }
        }
    }

    /// Writes everything buffered.
    public func flush() {
        lock.withLock { drainLocked() }
    }

    private func drainLocked() {
        var offset = 0
        buffer.withUnsafeBytes { bytes in
            while offset < bytes.count {
                let written = Foundation.write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { break }  // nowhere to log to: drop rather than block the server
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private func startFlusher() {
        let thread = Thread { [weak self] in
            while let sink = self {
                sink.flush()
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        thread.name = "log-flusher"
        thread.start()
        atexit { LogSink.standardError.flush() }
    }
}
