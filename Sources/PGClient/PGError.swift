import Failures

/// Everything that can go wrong talking to PostgreSQL: a server error (with SQLSTATE),
/// a lost or refused connection, an exhausted pool, or a value that does not decode.
///
/// `description` is safe to log and to show operators: it never contains parameter
/// values, the server's DETAIL (which quotes row data, e.g. `Key (email)=(a@b.c)`),
/// or the offending text of a decoding failure. `debugDescription` has all of it.
public struct PGError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Which layer the failure came from.
    public enum Kind: Sendable, Hashable {
        /// The server rejected a statement; `sqlState` says why.
        case server
        /// Could not connect, or the connection broke (server down, restarted, network).
        case connection
        /// No pooled connection became free within the acquire timeout.
        case poolExhausted
        /// The pool was shut down.
        case poolShutdown
        /// A column value could not be decoded as the requested Swift type.
        case decoding
        /// The query could not be sent as written (e.g. a NUL byte in a text parameter).
        case invalidQuery
        /// COMMIT was requested, but an earlier statement had failed; the transaction was rolled back.
        case transactionAborted
    }

    /// A five-character SQLSTATE code; compare against the named constants.
    public struct SQLState: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public var description: String { rawValue }
        /// The two-character class, e.g. "23" for integrity constraint violations.
        public var errorClass: Substring { rawValue.prefix(2) }

        public static let uniqueViolation: SQLState = "23505"
        public static let foreignKeyViolation: SQLState = "23503"
        public static let checkViolation: SQLState = "23514"
        public static let notNullViolation: SQLState = "23502"
        public static let serializationFailure: SQLState = "40001"
        public static let adminShutdown: SQLState = "57P01"
        public static let crashShutdown: SQLState = "57P02"
        public static let cannotConnectNow: SQLState = "57P03"
        public static let tooManyConnections: SQLState = "53300"
        public static let queryCanceled: SQLState = "57014"
        public static let undefinedTable: SQLState = "42P01"
        public static let undefinedColumn: SQLState = "42703"
        public static let syntaxError: SQLState = "42601"
        public static let readOnlySQLTransaction: SQLState = "25006"
    }

    public var kind: Kind
    /// SQLSTATE from the server (or libpq), if there was one.
    public var sqlState: SQLState?
    /// The primary message: short, no row data.
    public var message: String
    /// The server's DETAIL line; may quote row values, so only `debugDescription` shows it.
    public var detail: String?
    public var hint: String?
    /// The violated constraint, for integrity errors (e.g. "users_email_key").
    public var constraint: String?
    public var table: String?
    /// The column involved: the server's, or the result column that failed to decode.
    public var column: String?
    /// The query's redacted description (parameters shown as `****`), when known.
    public var query: String?
    /// Offending text of a decoding failure; private data, shown only by `debugDescription`.
    public var value: String?

    public init(
        kind: Kind, sqlState: SQLState? = nil, message: String, detail: String? = nil, hint: String? = nil,
        constraint: String? = nil, table: String? = nil, column: String? = nil, query: String? = nil,
        value: String? = nil
    ) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.table = table
        self.column = column
        self.query = query
        self.value = value
    }

    /// The connection is gone or could not be made: the database is unreachable, restarting
    /// or refusing connections. Retrying later (or answering 503) is the right response.
    /// A write refused because the server is read-only (SQLSTATE 25006: a standby, or a primary demoted by a
    /// failover) counts too: nothing was written, and the primary is elsewhere or coming.
    public var isConnectionFailure: Bool {
        if kind == .connection || isReadOnlyRefusal { return true }
        guard let sqlState else { return false }
        return sqlState.errorClass == "08"
            || [.adminShutdown, .crashShutdown, .cannotConnectNow, .tooManyConnections].contains(sqlState)
    }

    /// The server refused a write because it is read-only (SQLSTATE 25006): nothing was written, so the write
    /// may run again on a connection to the primary.
    public var isReadOnlyRefusal: Bool { sqlState == .readOnlySQLTransaction }

    /// Why the database cannot serve the statement now, or nil when that is not the reason (the one place that
    /// decides): every surface answers it `503` with `Retry-After`, never a bug's `500`.
    public var outage: DatabaseOutage? {
        if isReadOnlyRefusal { return .readOnly }
        if sqlState == .queryCanceled { return .statementTimeout }
        if kind == .poolExhausted || kind == .poolShutdown { return .poolExhausted }
        return isConnectionFailure ? .unreachable : nil
    }

    /// The database is temporarily unavailable to this process (`outage`): a server should answer 503, not 500.
    public var isServiceUnavailable: Bool { outage != nil }

    public var description: String {
        var text = "PGError(\(kind)"
        if let sqlState { text += " \(sqlState)" }
        text += "): "
        if kind == .decoding, let column { text += "column \"\(column)\": " }
        text += message
        if let constraint { text += " [constraint \(constraint)]" }
        return text
    }

    public var debugDescription: String {
        var text = description
        if let detail { text += "\nDETAIL: \(detail)" }
        if let hint { text += "\nHINT: \(hint)" }
        if let table { text += "\nTABLE: \(table)" }
        if let column, kind != .decoding { text += "\nCOLUMN: \(column)" }
        if let value { text += "\nVALUE: \(value.prefix(200))" }
        if let query { text += "\nQUERY: \(query)" }
        return text
    }
}

extension PGError {
    /// The error a `PGDecodable` conformance throws when `text` is not a valid `type`; `PGRow` adds the column name.
    public static func decodingFailure(_ type: Any.Type, _ text: String) -> PGError {
        PGError(kind: .decoding, message: "cannot decode a \(type) from the column's text", value: text)
    }

    static func unexpectedNull(_ type: Any.Type) -> PGError {
        PGError(kind: .decoding, message: "is NULL but \(type) is not optional; decode as \(type)? instead")
    }
}
