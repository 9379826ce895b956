import Failures

/// The one answer to "did this request fail because the database cannot serve it right now?": every surface
/// renders it as `503` with `Retry-After` (only the body's dialect differs), never as a bug's `500`.
///
/// Nothing was done that a retry would repeat: the connection was never had (pool exhausted, unreachable), the
/// server refused the write (read-only), or the statement was cancelled and rolled back (statement timeout).
public struct DatabaseUnavailable: Error, Sendable, Hashable {
    public typealias Reason = DatabaseOutage

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
}
