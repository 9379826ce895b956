import Foundation
import Logging

/// A snapshot of the pool's load.
public struct PGPoolStats: Sendable, Hashable {
    /// Maximum number of connections (and worker threads).
    public var size: Int
    /// Jobs currently running on a connection.
    public var inUse: Int
    /// Jobs queued for a free connection.
    public var waiting: Int
    /// Connections currently open.
    public var open: Int
}

/// A fixed-size pool of PostgreSQL connections for async code.
///
/// Each connection belongs to its own worker thread; `withConnection` queues the body for
/// the next free worker and suspends until it is done, so blocking libpq calls never occupy
/// Swift's cooperative thread pool. Connections open lazily, are checked before each job,
/// and are replaced when broken: after a database restart the pool recovers by itself.
///
/// After a failover: a connection string listing several hosts with `target_session_attrs=read-write` makes every
/// new connection find the primary (libpq tries the hosts in turn); a write refused by a read-only server (SQLSTATE
/// 25006) closes that connection and runs once more on a new one, then fails (503 for the API). A read pool
/// (`init(replicas:primary:…)`) spreads work over replicas and falls back to the primary.
public final class PGPool: Sendable {
    private let backend: Backend
    private let logger: Logger

    private enum Backend: Sendable {
        /// Connections of its own.
        case connections(PoolCore)
        /// Replicas' pools, with a primary's pool to fall back to.
        case replicas(ReplicaRouter)
    }

    /// - Parameters:
    ///   - connectionString: a libpq URI or keyword string.
    ///   - size: number of connections (and threads), at least 1.
    ///   - acquireTimeout: how long a job may wait for a free connection before failing
    ///     with `PGError` kind `.poolExhausted`.
    ///   - statementTimeout: PostgreSQL's `statement_timeout` on every connection: a statement running longer
    ///     is cancelled (`PGError` with SQLSTATE `57014`). Nil keeps the server's setting.
    ///   - preparedStatements: false runs every pipelined statement unnamed (for PgBouncer's transaction pooling).
    ///   - ledger: where each job's connection time is charged to its `chargedClient`; with one, waiting jobs are
    ///     served lightest client first and no client holds more than half the connections. Nil: first come, first
    ///     served.
    public init(
        connectionString: String, size: Int, acquireTimeout: Duration = .seconds(5),
        statementTimeout: Duration? = nil, preparedStatements: Bool = true, ledger: DatabaseTimeLedger? = nil,
        logger: Logger
    ) {
        let core = PoolCore(
            connectionString: connectionString, size: max(1, size), acquireTimeout: acquireTimeout,
            statementTimeout: statementTimeout, usesPreparedStatements: preparedStatements, ledger: ledger,
            logger: logger)
        core.startWorkers()
        core.startReaper()
        backend = .connections(core)
        self.logger = logger
    }

    /// A pool for public reads: each job goes to one of `replicaConnectionStrings` in turn (a pool of `size`
    /// connections each) while that replica is reachable and at most `maxLag` behind, else to `primary`. Replicas
    /// are checked every `checkInterval` and come back by themselves. Read-your-writes data must not use it: a
    /// replica may not have replayed the caller's last commit yet.
    public init(
        replicas replicaConnectionStrings: [String], primary: PGPool, size: Int, maxLag: Duration,
        checkInterval: Duration = .seconds(1), acquireTimeout: Duration = .seconds(5),
        statementTimeout: Duration? = nil, preparedStatements: Bool = true, ledger: DatabaseTimeLedger? = nil,
        logger: Logger
    ) {
        let replicas = replicaConnectionStrings.map {
            ReplicaRouter.Replica(
                pool: PGPool(
                    connectionString: $0, size: size, acquireTimeout: acquireTimeout,
                    statementTimeout: statementTimeout, preparedStatements: preparedStatements, ledger: ledger,
                    logger: logger),
                connectionString: $0)
        }
        let router = ReplicaRouter(
            replicas: replicas, primary: primary, maxLag: maxLag, checkInterval: checkInterval, logger: logger)
        router.startMonitor()
        backend = .replicas(router)
        self.logger = logger
    }

    deinit {
        // Workers hold only the core; without this they would wait for jobs forever.
        shutdown()
    }

    /// For a read pool: reads served by standbys and by a primary so far (by what the node is, not by the URL that
    /// reached it), which read URLs are in use now, and which led to a standby at their last check.
    public var replicaUse: (replicaReads: Int, primaryReads: Int, healthy: [Bool], standby: [Bool])? {
        guard case .replicas(let router) = backend else { return nil }
        let served = router.readsServed
        return (served.replicas, served.primary, router.healthyReplicas, router.standbyReplicas)
    }

    /// A `statement_timeout` for the current task's jobs instead of the pool's (e.g. a shorter one for expensive
    /// requests). A statement pipelined by `query`/`read` shares a pipeline only with statements under the same.
    @TaskLocal public static var statementTimeoutOverride: Duration?

    /// The client the current task's jobs run for (an address or an account, as the application names them):
    /// their connection time is charged to it in the pool's `DatabaseTimeLedger`. Nil: the server's own work.
    @TaskLocal public static var chargedClient: String?

    /// `SET statement_timeout` to `timeout` in milliseconds (an integer: nothing to quote), or back to the default.
    static func timeoutSQL(_ timeout: Duration?) -> String {
        guard let timeout else { return "RESET statement_timeout" }
        let (seconds, attoseconds) = timeout.components
        return "SET statement_timeout = \(seconds * 1000 + attoseconds / 1_000_000_000_000_000)"
    }

    /// For a read pool: the pools of its read URLs, whatever their last check found (none for any other pool).
    public var replicaPools: [PGPool] {
        guard case .replicas(let router) = backend else { return [] }
        return router.replicas.map(\.pool)
    }

    /// Runs `body` on a worker thread with a leased connection and returns its result.
    ///
    /// Throws `PGError` `.poolExhausted` if no connection is free within `acquireTimeout`,
    /// a connection error (quickly, thanks to the connect timeout) if the database is down,
    /// `.poolShutdown` after `shutdown()`, and `CancellationError` if the task is cancelled
    /// while waiting. Errors thrown by `body` are rethrown unchanged.
    @discardableResult
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        switch backend {
        case .replicas(let router):
            return try await router.run { try await $0.withConnection(body) }
        case .connections(let core):
            let timeout = Self.statementTimeoutOverride.map(Self.timeoutSQL)
            return try await againIfReadOnly {
                try await Self.submitAndWait(to: core) { continuation in
                    .session { connection in
                        let result = Result {
                            // Left in effect after the body (see `PoolCore.useStatementTimeout`).
                            try core.useStatementTimeout(override: timeout, on: connection)
                            return try body(connection)
                        }
                        if case .failure(let error as PGError) = result, error.isReadOnlyRefusal {
                            connection.abandon()
                        }
                        return { continuation.resume(with: result) }
                    }
                }
            }
        }
    }

    /// Runs `attempt`, and once more if a read-only server refused a write: the refusing connection was closed,
    /// so the second attempt connects anew (to the primary, given target_session_attrs=read-write). Nothing was
    /// written the first time, so nothing is written twice.
    private func againIfReadOnly<T>(_ attempt: () async throws -> T) async throws -> T {
        do {
            return try await attempt()
        } catch let error as PGError where error.isReadOnlyRefusal {
            logger.warning("a write reached a read-only database server; retrying on a new connection")
            return try await attempt()
        }
    }

    /// Runs `body` inside a transaction on a leased connection (see `PGConnection.transaction`):
    /// COMMIT when it returns, ROLLBACK when it throws. Throw `PGCommitThenThrow(error)` to
    /// commit and still fail.
    @discardableResult
    public func withTransaction<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        try await withConnection { connection in try connection.transaction(body) }
    }

    /// Runs one statement on its own (an implicit transaction, like `PQexecParams`).
    ///
    /// Statements waiting together share one pipeline on one connection (see `PGConnection.runPipelined`), so under
    /// load many callers cost the database far fewer round trips; each still commits or fails on its own. Use
    /// `withConnection` for anything that depends on session state or on another statement.
    @discardableResult
    public func query(_ query: PGQuery) async throws -> PGRows {
        try await statement(query, readOnly: false)
    }

    /// Runs one read-only statement (a `SELECT` that writes nothing). Like `query`, but reads waiting together
    /// also share one `BEGIN READ ONLY … COMMIT`, one transaction for the database instead of one each.
    /// PostgreSQL refuses a write in it (SQLSTATE 25006). A failing read does not fail the others: the ones the
    /// database skipped after it run again.
    ///
    /// Like every pipelined statement it runs as a prepared statement of its connection; `plan` says whether
    /// PostgreSQL plans it for each run's values (its default) or keeps one generic plan.
    public func read(_ query: PGQuery, plan: PGPlanCaching = .automatic) async throws -> PGRows {
        try await statement(query, readOnly: true, plan: plan)
    }

    private func statement(_ query: PGQuery, readOnly: Bool, plan: PGPlanCaching = .automatic) async throws -> PGRows {
        switch backend {
        case .replicas(let router):
            return try await router.run { try await $0.statement(query, readOnly: readOnly, plan: plan) }
        case .connections(let core):
            let timeout = Self.statementTimeoutOverride.map(Self.timeoutSQL)
            return try await againIfReadOnly {
                try await Self.submitAndWait(to: core) { continuation in
                    .statement(
                        .init(
                            query: query, readOnly: readOnly, plan: plan, timeout: timeout,
                            finish: { continuation.resume(with: $0.mapError { $0 as any Error }) }))
                }
            }
        }
    }

    /// Queues the work `makeWork` builds around the caller's continuation and suspends until it is finished,
    /// failed (timeout, shutdown) or cancelled while still waiting.
    private static func submitAndWait<T: Sendable>(
        to core: PoolCore, _ makeWork: @escaping (CheckedContinuation<T, any Error>) -> PoolJob.Work
    ) async throws -> T {
        let id = core.makeJobID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = PoolJob(
                    id: id, deadline: .now + core.acquireTimeout, client: chargedClient, work: makeWork(continuation),
                    fail: { error in continuation.resume(throwing: error) })
                if Task.isCancelled {
                    job.fail(CancellationError())
                } else {
                    core.submit(job)
                }
            }
        } onCancel: {
            core.cancel(jobID: id)
        }
    }

    /// Blocking variant of `withConnection` for command-line tools and other non-async
    /// code. Never call it from a pool worker (it would wait for itself).
    public func withConnectionSync<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) throws -> T {
        let core: PoolCore
        switch backend {
        case .replicas(let router): return try router.primary.withConnectionSync(body)
        case .connections(let own): core = own
        }
        let outcome = OutcomeBox<T>()
        core.submit(
            PoolJob(
                id: core.makeJobID(), deadline: .now + core.acquireTimeout, client: nil,
                work: .session { connection in
                    let result = Result { try body(connection) }
                    return { outcome.set(result) }
                },
                fail: { error in outcome.set(.failure(error)) }))
        return try outcome.wait().get()
    }

    /// The clients whose jobs wait for a connection (`chargedClient`), in queue order; a read pool's replicas'
    /// are not listed.
    public var waitingClients: [String?] {
        guard case .connections(let core) = backend else { return [] }
        return core.waitingClients
    }

    /// Current load: size, connections in use, jobs waiting, connections open.
    /// A read pool sums its replicas' pools.
    public var stats: PGPoolStats {
        switch backend {
        case .connections(let core):
            return core.stats
        case .replicas(let router):
            return router.replicas.map(\.pool.stats).reduce(PGPoolStats(size: 0, inUse: 0, waiting: 0, open: 0)) {
                PGPoolStats(
                    size: $0.size + $1.size, inUse: $0.inUse + $1.inUse, waiting: $0.waiting + $1.waiting,
                    open: $0.open + $1.open)
            }
        }
    }

    /// Closes the pool: waiting jobs fail with `.poolShutdown`, later calls throw it too,
    /// and connections close as their current jobs finish. Does not wait for them. A read pool closes its
    /// replicas' pools, not the primary's.
    public func shutdown() {
        switch backend {
        case .connections(let core): core.shutdown()
        case .replicas(let router): router.shutdown()
        }
    }
}

/// A one-shot result handed from a worker thread to a blocked caller.
///
/// `@unchecked Sendable`: `result` is only touched while holding `condition`'s lock (a `Mutex` can't wait).
private final class OutcomeBox<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        condition.lock()
        result = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Result<T, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return result }
            condition.wait()
        }
    }
}
