/// How the server ended a WebSocket connection, for its handler (metrics count closes by reason). Nil when the
/// server did not end it: the client went away without a close frame, or the socket failed.
public enum WebSocketEnd: Sendable, Equatable {
    /// The server sent a close frame: its handler's (a limit, a protocol error), the reactor's for a protocol error,
    /// or the echo of the client's.
    case closed(WebSocketCloseCode, reason: String)
    /// Closed (1001) after `idleTimeout` without a message.
    case idle
    /// Closed (1001) because the server is stopping.
    case shutdown
    /// Cut without a close frame for not reading: its outgoing buffer passed `outgoingBufferLimit`.
    case slowConsumer
}
