/// Why the database cannot serve a request right now. Nothing was done that a retry would repeat: the connection
/// was never had, the server refused the write, or the statement was cancelled and rolled back.
public enum DatabaseOutage: String, Sendable, Hashable {
    /// Cannot connect, or the connection broke (server down, restarting, refusing connections, failing over).
    case unreachable
    /// No pooled connection became free in time (e.g. every one waits for a synchronous standby's ack).
    case poolExhausted
    /// The server refused a write because it is read-only (SQLSTATE 25006: a standby or a demoted primary).
    case readOnly
    /// The statement ran past the statement timeout and was cancelled (SQLSTATE 57014).
    case statementTimeout

    /// Longer while the database itself is away (a restart or a failover takes seconds) than when this instance is
    /// only short of connections.
    public var retryAfterSeconds: Int {
        switch self {
        case .unreachable, .readOnly: 2
        case .poolExhausted, .statementTimeout: 1
        }
    }

    /// For people: why, and that trying again later is the remedy. No SQL, no server detail.
    public var message: String {
        switch self {
        case .unreachable: "The database is unavailable; try again shortly"
        case .poolExhausted: "The server is busy (no database connection free); try again shortly"
        case .readOnly: "The database is read-only for a moment (failing over); try again shortly"
        case .statementTimeout: "The request took longer than the server allows; try again or a narrower one"
        }
    }
}

/// A statement PostgreSQL refused because of what the client sent: its SQLSTATE and texts, as PostgREST shows them.
public struct DatabaseRejection: Sendable, Hashable {
    public let sqlState: String
    public let message: String
    public let detail: String?
    public let hint: String?

    /// Nil for a SQLSTATE that is not the client's doing (that is a bug: `Failure.internal`).
    public init?(sqlState: String, message: String, detail: String?, hint: String?) {
        guard ["22", "23", "42", "54"].contains(sqlState.prefix(2)) else { return nil }
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
    }

    /// Duplicates and broken references conflict; a privilege refusal is forbidden; anything else is bad input.
    public var status: Int {
        switch sqlState {
        case "23505", "23503": 409
        case "42501": 403
        default: 400
        }
    }
}
