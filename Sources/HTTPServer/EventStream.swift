import Synchronization

/// A response body written while the connection stays open (server-sent events): the route hands one back in
/// `Response.stream(_:)` and keeps it to `send` bytes later, from any thread.
///
/// Bytes wait in a bounded buffer until the client's socket takes them. A client reading too slowly to keep the
/// buffer under `bufferLimit` is cut off: its buffer is dropped at once and its connection closed, so a stalled
/// consumer holds at most `bufferLimit` bytes. While the buffer is empty the connection is suspended (no event
/// thread polls it); `send` resumes it.
public final class EventStream: Sendable {
    public static let defaultBufferLimit = 64 * 1024

    public let bufferLimit: Int
    private let state = Mutex(State())

    private struct State {
        var pending: [UInt8] = []
        /// The connection MHD suspended because nothing was pending (resumed by the next `send` or `finish`).
        var parked: ConnectionHandle?
        /// Set once the response is queued: shuts the socket down, for a consumer that fell behind.
        var cut: (@Sendable () -> Void)?
        var ending = false
        var overflowed = false
        var closed = false
        var onClose: [@Sendable () -> Void] = []
    }

    public init(bufferLimit: Int = EventStream.defaultBufferLimit) {
        self.bufferLimit = bufferLimit
    }

    /// Queues `bytes`; false when the stream is closed or ending, or when they would take the buffer past its
    /// limit (the stream is then closed).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        let (accepted, wake, cut) = state.withLock { state -> (Bool, ConnectionHandle?, (@Sendable () -> Void)?) in
            guard !state.closed, !state.ending, !state.overflowed else { return (false, nil, nil) }
            guard state.pending.count + bytes.count <= bufferLimit else {
                state.overflowed = true
                state.pending = []
                // A parked connection is resumed and ends itself; one still writing is shut down.
                if let parked = state.parked {
                    state.parked = nil
                    return (false, parked, nil)
                }
                return (false, nil, state.cut)
            }
            state.pending += bytes
            defer { state.parked = nil }
            return (true, state.parked, nil)
        }
        wake?.resume()
        cut?()
        return accepted
    }

    /// Ends the stream once what is pending has been written.
    public func finish() {
        let wake = state.withLock { state -> ConnectionHandle? in
            state.ending = true
            defer { state.parked = nil }
            return state.parked
        }
        wake?.resume()
    }

    /// Whether the connection is still open and the stream not ending.
    public var isOpen: Bool { state.withLock { !$0.closed && !$0.ending && !$0.overflowed } }

    /// Bytes waiting for the client (for tests and metrics).
    public var bufferedBytes: Int { state.withLock { $0.pending.count } }

    /// Runs `body` once the connection is gone (at once if it already is), on whichever thread closed it.
    public func onClose(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.closed { return true }
            state.onClose.append(body)
            return false
        }
        if now { body() }
    }

    // MARK: - The connection's side, called by `MicroHTTPD.swift` on the event thread.

    func attach(cut: @escaping @Sendable () -> Void) {
        state.withLock { $0.cut = cut }
    }

    enum Read {
        case bytes(Int)
        /// Nothing pending: the connection was suspended until there is.
        case parked
        case end
        case failed
    }

    /// Copies pending bytes into `buffer`; with none, suspends `connection` (MHD's pattern for "no data yet":
    /// suspend, then return 0) unless the stream is over.
    func read(into buffer: UnsafeMutableRawBufferPointer, connection: ConnectionHandle) -> Read {
        state.withLock { state in
            if state.overflowed || state.closed { return .failed }
            if state.pending.isEmpty {
                if state.ending { return .end }
                state.parked = connection
                connection.suspend()
                return .parked
            }
            let count = min(buffer.count, state.pending.count)
            state.pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            state.pending.removeFirst(count)
            return .bytes(count)
        }
    }

    /// MHD is done with the response (the connection closed or the stream ended).
    func connectionClosed() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            state.closed = true
            state.pending = []
            state.parked = nil
            state.cut = nil
            defer { state.onClose = [] }
            return state.onClose
        }
        for handler in handlers { handler() }
    }
}
