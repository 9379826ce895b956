#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibPQ
import Logging

/// One libpq connection. Calls block the calling thread until the server answers.
///
/// Not `Sendable`: a connection serves one thread at a time. Use `PGPool` from async code;
/// use a `PGConnection` directly for scripts and migrations.
public final class PGConnection {
    /// The only owner of the `PGconn*`; `PQfinish` runs exactly once, in deinit.
    let handle: OpaquePointer
    private let noticeSink: NoticeSink
    /// Since when a call has waited for the server (nil when libpq cannot make a cancel handle).
    let answerWatch: AnswerWatch?
    /// Nesting depth of `transaction` calls that use savepoints.
    var savepointDepth = 0
    /// Set when the session is left in a state no later caller can use (see `abandon()`).
    private var isAbandoned = false
    /// The named statements pipelines have prepared on this session.
    var preparedStatements = PreparedStatements()
    /// The `SET statement_timeout` a pool job left in effect instead of the pool's (nil: the pool's). Kept until a
    /// job wanting another timeout comes, so a run of jobs with the same override pays no round trips for it.
    var statementTimeoutOverride: String?

    /// How long a connection attempt may take before failing, unless the connection
    /// string says otherwise: a dead server should fail a request, not hang it.
    public static let defaultConnectTimeoutSeconds = 3

    /// Connects to `connectionString`, a URI (`postgresql://user@host:5432/db`) or a
    /// keyword string (`host=... dbname=...`).
    ///
    /// The session is set to TimeZone=UTC, DateStyle=ISO and client_encoding=UTF8, which
    /// the decoders rely on. `application_name` defaults to `quote-server`, the connect
    /// timeout to 3 s, TCP keepalives are on and JIT compilation off; the connection string can override those.
    public init(
        connectionString: String, statementTimeout: Duration? = nil, logger: Logger = Logger(label: "PGClient")
    ) throws(PGError) {
        // Earlier entries are defaults the expanded connection string overrides; later
        // entries win over it. The string itself is passed whole as `dbname` with
        // expand_dbname=1, so it is never concatenated or re-quoted.
        let parameters: [(String, String)] = [
            ("connect_timeout", String(Self.defaultConnectTimeoutSeconds)),
            ("application_name", "quote-server"),
            ("keepalives", "1"),
            ("keepalives_idle", "30"),
            ("keepalives_interval", "10"),
            ("keepalives_count", "3"),
            // No JIT: PostgreSQL compiles a statement whose estimated cost passes `jit_above_cost`, and the
            // estimates of set-returning functions (1,000 rows) and of tables not yet analyzed make sub-millisecond
            // statements look expensive, and compiling them took far longer than running them (bench/README.md,
            // "Session 41: no JIT"). A connection string's own `options` replace this.
            ("options", "-c jit=off"),
            ("dbname", connectionString),
            ("client_encoding", "UTF8"),
        ]
        let pointer = withCStringArray(parameters.map(\.0)) { keywords in
            withCStringArray(parameters.map(\.1)) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let pointer else {
            throw PGError(kind: .connection, message: "libpq could not allocate a connection")
        }
        self.handle = pointer
        self.noticeSink = NoticeSink(logger: logger)
        self.answerWatch = AnswerWatch(pointer)
        // From here on deinit owns the handle, also when this init throws below.
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PGError(kind: .connection, message: lastErrorMessage)
        }
        PQsetNoticeReceiver(
            handle,
            { context, result in
                // libpq keeps ownership of `result`; it is only read here.
                guard let context, let result else { return }
                Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue().receive(noticeMessage(of: result))
            }, Unmanaged.passUnretained(noticeSink).toOpaque())
        // SET rather than the `options` keyword, so a user's own `options` in the URI survive.
        try execute(unsafeSQL: "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET bytea_output = 'hex'")
        if let statementTimeout {
            let (seconds, attoseconds) = statementTimeout.components
            let milliseconds = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            try execute(unsafeSQL: "SET statement_timeout = \(milliseconds)")  // an integer: nothing to quote
        }
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection is unusable (`PQstatus` is not `CONNECTION_OK`, or it was abandoned).
    public var isBroken: Bool { isAbandoned || PQstatus(handle) != CONNECTION_OK }

    /// Marks the connection unusable, so the pool replaces it instead of handing it to the next job.
    func abandon() { isAbandoned = true }

    /// Runs one statement with its parameters (PQexecParams) and returns all rows as text.
    @discardableResult
    public func query(_ query: PGQuery) throws(PGError) -> PGRows {
        let parameters = try PGParameters(query)
        let result = waiting {
            parameters.withCArguments { count, types, values, lengths, formats in
                parameters.sql.withCString { sql in
                    PQexecParams(handle, sql, count, types, values, lengths, formats, 0)
                }
            }
        }
        return try rows(of: result, query: query.description)
    }

    /// Runs one or more `;`-separated statements without parameters (PQexec), e.g. a
    /// migration file. Unless the text has its own BEGIN/COMMIT, the statements run as one
    /// implicit transaction: all or nothing.
    public func execute(unsafeSQL sql: String) throws(PGError) {
        guard !containsNUL(sql) else {
            throw PGError(kind: .invalidQuery, message: "the SQL text contains a NUL byte")
        }
        let result = waiting { sql.withCString { PQexec(handle, $0) } }
        _ = try rows(of: result, query: nil)
    }

    /// Runs `body` with no limit on how long a call may wait for the server (a pool otherwise cancels a wait past
    /// its statement timeout, see `AnswerWatch`): for work that lifts the statement timeout itself (migrations).
    public func withoutWaitLimit<T>(_ body: (PGConnection) throws -> T) rethrows -> T {
        answerWatch?.setUnlimited(true)
        defer { answerWatch?.setUnlimited(false) }
        return try body(self)
    }

    /// Runs a blocking libpq call as one wait for the server (see `AnswerWatch`).
    private func waiting<T>(_ body: () -> T) -> T {
        guard let answerWatch else { return body() }
        return answerWatch.waiting(body)
    }

    func rows(of pointer: OpaquePointer?, query: String?) throws(PGError) -> PGRows {
        guard let result = PGResultHandle(taking: pointer) else {
            throw PGError(kind: isBroken ? .connection : .server, message: lastErrorMessage, query: query)
        }
        guard result.succeeded else {
            throw result.error(connectionBroken: isBroken, query: query)
        }
        if let unconfirmed = takeUnconfirmedCommit(query: query) { throw unconfirmed }
        return result.rows()
    }

    /// The failure of a statement whose commit stopped waiting for a synchronous standby (the statement timeout
    /// cut the wait), once: it committed on this server but is not known to be on the standby, so it must not be
    /// acknowledged as done (a failover could lose it). It counts as cut short by the statement timeout (57014).
    func takeUnconfirmedCommit(query: String?) -> PGError? {
        guard noticeSink.unconfirmedCommit else { return nil }
        noticeSink.unconfirmedCommit = false
        return PGError(
            kind: .server, sqlState: .queryCanceled,
            message: "the commit was not confirmed by a synchronous standby in time", query: query)
    }

    var lastErrorMessage: String {
        let message = PQerrorMessage(handle).map { trimmedLibpqMessage(String(cString: $0)) } ?? ""
        return message.isEmpty ? "connection failed" : message
    }

    /// Where the session stands with respect to transactions.
    enum TransactionState {
        case idle, active, inTransaction, failedTransaction, unknown
    }

    var transactionState: TransactionState {
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: .idle
        case PQTRANS_ACTIVE: .active
        case PQTRANS_INTRANS: .inTransaction
        case PQTRANS_INERROR: .failedTransaction
        default: .unknown
        }
    }

    /// Whether an idle connection can take the next job: still connected and nothing waiting
    /// on the socket. A server that shut down or restarted leaves an idle connection with a
    /// FATAL message and EOF to read; such a connection is replaced instead of failing a query.
    var isIdleAndHealthy: Bool {
        guard !isBroken, transactionState == .idle else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        // Idle sessions receive nothing unsolicited that we use (no LISTEN), so any readable
        // data or hang-up means the server has gone away or is about to.
        return ready == 0
    }
}

/// Routes server notices ("relation already exists, skipping") to the logger instead of
/// libpq's default of printing them on stderr, and notes the one that says a commit was not confirmed.
private final class NoticeSink {
    let logger: Logger
    /// A commit stopped waiting for its synchronous standby (statement timeout, cancel): committed here, but not
    /// known to be on the standby. Set by the notice, taken by `PGConnection.takeUnconfirmedCommit`.
    var unconfirmedCommit = false

    init(logger: Logger) { self.logger = logger }

    func receive(_ message: String) {
        // PostgreSQL's WARNING (syncrep.c) has no SQLSTATE of its own: its text is the only sign.
        if message.hasPrefix("canceling wait for synchronous replication")
            || message.hasPrefix("canceling the wait for synchronous replication")
        {
            unconfirmedCommit = true
        }
        logger.debug("PostgreSQL notice: \(message)")
    }
}

/// Calls `body` with a NULL-terminated array of C strings, valid only inside `body`.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    var storage = [CChar]()
    var offsets = [Int]()
    for string in strings {
        offsets.append(storage.count)
        storage.append(contentsOf: string.utf8CString)
    }
    return storage.withUnsafeBufferPointer { buffer in
        var pointers: [UnsafePointer<CChar>?] = offsets.map { buffer.baseAddress! + $0 }
        pointers.append(nil)
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
