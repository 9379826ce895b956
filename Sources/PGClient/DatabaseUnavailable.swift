/// The one answer to "did this request fail because the database cannot serve it right now?": every surface
/// renders it as `503` with `Retry-After` (only the body's dialect differs), never as a bug's `500`.
///
/// Nothing was done that a retry would repeat: the connection was never had (pool exhausted, unreachable), the
/// server refused the write (read-only), or the statement was cancelled and rolled back (statement timeout).
public struct DatabaseUnavailable: Error, Sendable, Hashable {
    public enum Reason: String, Sendable, Hashable {
        /// Cannot connect, or the connection broke (server down, restarting, refusing connections, failing over).
        case unreachable
        /// No pooled connection became free in time (e.g. every one waits for a synchronous standby's ack).
        case poolExhausted
        /// The server refused a write because it is read-only (SQLSTATE 25006: a standby or a demoted primary).
        case readOnly
        /// The statement ran past the statement timeout and was cancelled (SQLSTATE 57014).
        case statementTimeout
    }

    public let reason: Reason

    public init(reason: Reason) { self.reason = reason }

    /// The classification of `error`, or nil when it is not the database being unavailable.
    public init?(_ error: any Error) {
        switch error {
        case let error as DatabaseUnavailable: self = error
        case let error as PGError:
            guard let reason = Self.reason(of: error) else { return nil }
            self.reason = reason
        default: return nil
        }
    }

    private static func reason(of error: PGError) -> Reason? {
        if error.isReadOnlyRefusal { return .readOnly }
        if error.sqlState == .queryCanceled { return .statementTimeout }
        if error.kind == .poolExhausted || error.kind == .poolShutdown { return .poolExhausted }
        return error.isConnectionFailure ? .unreachable : nil
    }

    /// Seconds a client should wait before trying again: longer while the database itself is away (a restart or
    /// a failover takes seconds) than when this instance is only short of connections.
    public var retryAfterSeconds: Int {
        switch reason {
        case .unreachable, .readOnly: return 2
        case .poolExhausted, .statementTimeout: return 1
        }
    }

    /// For people: why, and that trying again later is the remedy. No SQL, no server detail.
    public var message: String {
        switch reason {
        case .unreachable: return "The database is unavailable; try again shortly"
        case .poolExhausted: return "The server is busy (no database connection free); try again shortly"
        case .readOnly: return "The database is read-only for a moment (failing over); try again shortly"
        case .statementTimeout: return "The request took longer than the server allows; try again or a narrower one"
        }
    }

    /// The `Retry-After` header every dialect sends with it.
    public var retryAfterHeader: (name: String, value: String) { ("Retry-After", String(retryAfterSeconds)) }
}
