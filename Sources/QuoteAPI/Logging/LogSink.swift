import Foundation
import Synchronization

/// Where log lines go: standard error, through a small buffer.
///
/// One `write(2)` per request line cost the fastest routes much of their throughput, so lines are
/// gathered and written at most every 50 ms or every 32 KiB, whichever comes first. Warnings and errors
/// flush at once, and `flush()` runs on shutdown, so what matters is never left in the buffer.
public final class LogSink: Sendable {
    public static let standardError = LogSink(fileDescriptor: 2)

    private let fileDescriptor: Int32
    private let state: Mutex<(buffer: [UInt8], flusherStarted: Bool)>
    private static let flushThreshold = 32 * 1024

    /// A sink writing to `fileDescriptor` (tests give a pipe; the server uses `standardError`).
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        var buffer: [UInt8] = []
        buffer.reserveCapacity(2 * Self.flushThreshold)
        state = Mutex((buffer, false))
    }

    /// Appends a whole line (with its newline). `urgent` lines are written before this returns.
    func write(_ line: [UInt8], urgent: Bool) {
        state.withLock { state in
            state.buffer.append(contentsOf: line)
            if urgent || state.buffer.count >= Self.flushThreshold {
                drain(&state.buffer)
            } else if !state.flusherStarted {
                state.flusherStarted = true
                startFlusher()
            }
        }
    }

    /// Writes everything buffered.
    public func flush() {
        state.withLock { drain(&$0.buffer) }
    }

    /// Writes `buffer` out and empties it; called with `state` locked.
    private func drain(_ buffer: inout [UInt8]) {
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
