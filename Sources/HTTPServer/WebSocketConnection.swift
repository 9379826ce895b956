#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// What a WebSocket endpoint does with its connections. Called on the server's WebSocket thread, one message at a
/// time per connection: it must not block (hand slow work to a task).
public protocol WebSocketHandler: AnyObject, Sendable {
    /// A whole text message (reassembled from its fragments, valid UTF-8).
    func received(text: String, on connection: WebSocketConnection)
    /// A whole binary message.
    func received(binary: [UInt8], on connection: WebSocketConnection)
    /// The connection is gone (closed by either side, cut, or the server stopping); called once.
    func closed(_ connection: WebSocketConnection)
}

/// How much one WebSocket connection may hold and how long it may stay silent.
public struct WebSocketSettings: Sendable {
    /// A message (all its fragments) longer than this closes the connection with 1009.
    public var maxMessageBytes = 64 * 1024
    /// Bytes waiting for a client that reads too slowly; past it the connection is cut (no close frame: the
    /// client is not reading).
    public var outgoingBufferLimit = 256 * 1024
    /// A connection that sends nothing (not even a ping or a heartbeat) for this long is closed with 1001.
    public var idleTimeout: Duration = .seconds(60)
    /// After the server's close frame, how long the client has to answer before the socket is closed anyway.
    public var closeTimeout: Duration = .seconds(2)

    public init() {}
}

/// An HTTP connection upgraded to a WebSocket (RFC 6455), from the server's side. `send` and `close` may be
/// called from any thread.
public final class WebSocketConnection: Sendable {
    /// The client's address (the one a trusted proxy forwarded, or the peer's).
    public let address: String
    public let settings: WebSocketSettings
    private let state: Mutex<State>

    struct State {
        var socket: Int32
        var upgrade: UpgradeHandle?
        var pending: [UInt8] = []
        var phase = Phase.open
        /// Whether the reactor watches the socket for room to write (something is pending).
        var watchingWrites = false
        var closeDeadline: ContinuousClock.Instant?
        var end: WebSocketEnd?
    }

    enum Phase {
        case open
        /// The server's close frame is queued or sent; messages from the client are ignored.
        case closing
        /// Cut for falling behind or shut down: the reactor releases it at its next wake-up.
        case cut
        case released
    }

    /// The reactor that reads the socket; weak so that a connection kept by a handler does not keep it alive.
    private let reactor: Mutex<WebSocketReactor?>

    init(socket: Int32, upgrade: UpgradeHandle, address: String, settings: WebSocketSettings, reactor: WebSocketReactor)
    {
        self.address = address
        self.settings = settings
        self.state = Mutex(State(socket: socket, upgrade: upgrade))
        self.reactor = Mutex(reactor)
    }

    public var isOpen: Bool { state.withLock { $0.phase == .open } }

    /// Bytes waiting for the client now.
    public var bufferedBytes: Int { state.withLock { $0.pending.count } }

    /// How the server ended it, if it did.
    public var end: WebSocketEnd? { state.withLock { $0.end } }

    /// Queues a text message; false when the connection is closing or gone, or when the client has fallen so far
    /// behind that the message would take its buffer past the limit (it is then cut).
    @discardableResult
    public func send(text: String) -> Bool { write(WebSocketFrameEncoder.frame(.text, Array(text.utf8))) }

    @discardableResult
    public func send(text bytes: [UInt8]) -> Bool { write(WebSocketFrameEncoder.frame(.text, bytes)) }

    @discardableResult
    public func send(binary: [UInt8]) -> Bool { write(WebSocketFrameEncoder.frame(.binary, binary)) }

    /// Starts the closing handshake: the close frame goes out after what is pending; the socket is released when
    /// the client answers or after `closeTimeout`.
    public func close(_ code: WebSocketCloseCode, reason: String = "") {
        close(code, reason: reason, end: .closed(code, reason: reason))
    }

    /// `close`, with how the handler is told the server ended it.
    func close(_ code: WebSocketCloseCode, reason: String, end: WebSocketEnd) {
        let frame = WebSocketFrameEncoder.close(code, reason: reason)
        let deadline = state.withLock { state -> ContinuousClock.Instant? in
            guard state.phase == .open else { return nil }
            state.phase = .closing
            state.end = end
            state.closeDeadline = .now + settings.closeTimeout
            enqueue(frame, in: &state, force: true)
            return state.closeDeadline
        }
        // Released by then if the client has not answered.
        if let deadline { reactor.withLock { $0 }?.recheck(self, at: deadline) }
    }

    /// The connection's state and its socket, for the reactor.
    func withState<T>(_ body: (inout State) -> T) -> T { state.withLock { body(&$0) } }

    /// A pong counts against the buffer like any message: a client sending pings without reading is cut.
    func pong(_ payload: [UInt8]) { _ = write(WebSocketFrameEncoder.frame(.pong, payload)) }

    private func write(_ frame: [UInt8]) -> Bool {
        state.withLock { state in
            guard state.phase == .open else { return false }
            return enqueue(frame, in: &state, force: false)
        }
    }

    /// Writes what the socket takes now and keeps the rest; a client past the buffer limit is cut (a control
    /// frame of the server's own is always kept: it is small and ends the connection anyway).
    @discardableResult
    private func enqueue(_ frame: [UInt8], in state: inout State, force: Bool) -> Bool {
        if !force && state.pending.count + frame.count > settings.outgoingBufferLimit {
            state.end = .slowConsumer
            cut(&state)
            return false
        }
        state.pending += frame
        flush(&state)
        return true
    }

    /// Sends pending bytes until the socket's buffer is full; watches for room when some remain.
    func flush(_ state: inout State) {
        guard state.phase != .released, state.phase != .cut else { return }
        while !state.pending.isEmpty {
            let sent = state.pending.withUnsafeBytes {
                Glibc.send(state.socket, $0.baseAddress, $0.count, sendWithoutSignal)
            }
            if sent > 0 {
                state.pending.removeFirst(sent)
                continue
            }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { break }
            cut(&state)
            return
        }
        let wantWrites = !state.pending.isEmpty
        if wantWrites != state.watchingWrites {
            state.watchingWrites = wantWrites
            reactor.withLock { $0 }?.watch(state.socket, writes: wantWrites)
        }
    }

    /// Shuts the socket down; the reactor sees it (epoll, or its deadline check at once) and releases the
    /// connection.
    func cut(_ state: inout State) {
        guard state.phase != .released, state.phase != .cut else { return }
        state.phase = .cut
        state.pending = []
        shutdown(state.socket, Int32(SHUT_RDWR))
        reactor.withLock { $0 }?.recheck(self, at: .now)
    }

    /// Cuts the connection from outside the reactor (the server stopping, a limit).
    func cut() { state.withLock { cut(&$0) } }
}
