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
public final class PGPool: Sendable {
    private let core: PoolCore

    /// - Parameters:
    ///   - connectionString: a libpq URI or keyword string.
    ///   - size: number of connections (and threads), at least 1.
    ///   - acquireTimeout: how long a job may wait for a free connection before failing
    ///     with `PGError` kind `.poolExhausted`.
    ///   - statementTimeout: PostgreSQL's `statement_timeout` on every connection: a statement running longer
    ///     is cancelled (`PGError` with SQLSTATE `57014`). Nil keeps the server's setting.
    public init(
        connectionString: String, size: Int, acquireTimeout: Duration = .seconds(5), statementTimeout: Duration? = nil,
        logger: Logger
    ) {
        core = PoolCore(connectionString: connectionString, size: max(1, size),
                        acquireTimeout: acquireTimeout, statementTimeout: statementTimeout, logger: logger)
        core.startWorkers()
        core.startReaper()
    }

    deinit {
        // Workers hold only the core; without this they would wait for jobs forever.
        core.shutdown()
    }

    /// Runs `body` on a worker thread with a leased connection and returns its result.
    ///
    /// Throws `PGError` `.poolExhausted` if no connection is free within `acquireTimeout`,
    /// a connection error (quickly, thanks to the connect timeout) if the database is down,
    /// `.poolShutdown` after `shutdown()`, and `CancellationError` if the task is cancelled
    /// while waiting. Errors thrown by `body` are rethrown unchanged.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        try await submitAndWait { continuation in
            .session { connection in
                let result = Result { try body(connection) }
                return { continuation.resume(with: result) }
            }
        }
    }

    /// Runs `body` inside a transaction on a leased connection (see `PGConnection.transaction`):
    /// COMMIT when it returns, ROLLBACK when it throws. Throw `PGCommitThenThrow(error)` to
    /// commit and still fail.
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
        try await submitAndWait { continuation in
            .statement(.init(query: query, readOnly: readOnly, plan: plan,
                             finish: { continuation.resume(with: $0.mapError { $0 as any Error }) }))
        }
    }

    /// Queues the work `makeWork` builds around the caller's continuation and suspends until it is finished,
    /// failed (timeout, shutdown) or cancelled while still waiting.
    private func submitAndWait<T: Sendable>(
        _ makeWork: @escaping (CheckedContinuation<T, any Error>) -> PoolJob.Work
    ) async throws -> T {
        let core = self.core
        let id = core.makeJobID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = PoolJob(
                    id: id, deadline: .now + core.acquireTimeout, work: makeWork(continuation),
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
        let outcome = OutcomeBox<T>()
        let core = self.core
        core.submit(PoolJob(
            id: core.makeJobID(), deadline: .now + core.acquireTimeout,
            work: .session { connection in
                let result = Result { try body(connection) }
                return { outcome.set(result) }
            },
            fail: { error in outcome.set(.failure(error)) }))
        return try outcome.wait().get()
    }

    /// Current load: size, connections in use, jobs waiting, connections open.
    public var stats: PGPoolStats { core.stats }

    /// Closes the pool: waiting jobs fail with `.poolShutdown`, later calls throw it too,
    /// and connections close as their current jobs finish. Does not wait for them.
    public func shutdown() {
        core.shutdown()
    }
}

/// A one-shot result handed from a worker thread to a blocked caller.
///
/// `@unchecked Sendable`: `result` is only touched while holding `condition`'s lock.
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
