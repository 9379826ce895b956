import Foundation
import Logging

/// One unit of work waiting for a connection. Exactly one of `run` and `fail` is called,
/// by whoever removes the job from the queue (under the lock): a worker, the acquire
/// timer, cancellation or shutdown.
struct PoolJob: Sendable {
    let id: UInt64
    let deadline: ContinuousClock.Instant
    /// Runs the caller's body on the worker's connection; returns the hand-back of its
    /// outcome, which the worker calls once the connection is tidied up and free again.
    let run: @Sendable (PGConnection) -> @Sendable () -> Void
    /// Hands back an error instead (no connection, timed out, cancelled, shut down).
    let fail: @Sendable (any Error) -> Void
}

/// The pool's shared state and its worker threads' main loop.
///
/// `@unchecked Sendable`: every mutable field is read and written only while holding
/// `condition`'s lock; the configuration fields are immutable.
final class PoolCore: @unchecked Sendable {
    let connectionString: String
    let size: Int
    let acquireTimeout: Duration
    let logger: Logger

    private let condition = NSCondition()
    private var queue: [PoolJob] = []
    private var nextJobID: UInt64 = 0
    private var inUse = 0
    private var open = 0
    private var isShutDown = false

    init(connectionString: String, size: Int, acquireTimeout: Duration, logger: Logger) {
        self.connectionString = connectionString
        self.size = size
        self.acquireTimeout = acquireTimeout
        self.logger = logger
    }

    /// Starts one thread per connection slot. Blocking libpq calls run only on these
    /// threads, never on Swift's cooperative pool.
    func startWorkers() {
        for index in 0..<size {
            let thread = Thread { [self] in workerLoop() }
            thread.name = "pg-pool-\(index)"
            thread.start()
        }
    }

    var stats: PGPoolStats {
        condition.lock()
        defer { condition.unlock() }
        return PGPoolStats(size: size, inUse: inUse, waiting: queue.count, open: open)
    }

    func makeJobID() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        nextJobID += 1
        return nextJobID
    }

    /// Queues `job` and arms its acquire timeout; fails it at once after shutdown.
    func submit(_ job: PoolJob) {
        condition.lock()
        if isShutDown {
            condition.unlock()
            job.fail(PGError(kind: .poolShutdown, message: "the connection pool is shut down"))
            return
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Starts the thread that fails jobs still waiting past their deadline. A check at dequeue time
    /// is not enough: when every connection is held by a slow query, no worker dequeues, and the
    /// waiter must still fail on time. One thread polling every 50 ms replaces a timer per job,
    /// which cost a wake-up per request.
    func startReaper() {
        let thread = Thread { [weak self] in
            while let core = self, core.expireOverdueJobs() {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        thread.name = "pg-pool-reaper"
        thread.start()
    }

    /// Fails every waiting job whose deadline passed; false once the pool is shut down.
    private func expireOverdueJobs() -> Bool {
        let now = ContinuousClock.now
        condition.lock()
        let overdue = queue.filter { $0.deadline < now }
        queue.removeAll { $0.deadline < now }
        let running = !isShutDown
        condition.unlock()
        for job in overdue {
            job.fail(PGError(kind: .poolExhausted,
                             message: "no database connection became free within \(acquireTimeout) (pool size \(size))"))
        }
        return running
    }

    /// Fails the job with CancellationError if it is still waiting.
    func cancel(jobID: UInt64) {
        remove(jobID: jobID) { CancellationError() }
    }

    private func remove(jobID: UInt64, error: () -> any Error) {
        condition.lock()
        guard let index = queue.firstIndex(where: { $0.id == jobID }) else {
            condition.unlock()
            return
        }
        let job = queue.remove(at: index)
        condition.unlock()
        job.fail(error())
    }

    /// Stops accepting work, fails everything still waiting and lets workers exit (closing
    /// their connections) once their current job is done.
    func shutdown() {
        condition.lock()
        isShutDown = true
        let waiting = queue
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
        for job in waiting {
            job.fail(PGError(kind: .poolShutdown, message: "the connection pool is shut down"))
        }
    }

    // MARK: Worker side

    /// The next job to run, waiting while there is none; nil once the pool is shut down.
    private func takeJob() -> PoolJob? {
        condition.lock()
        defer { condition.unlock() }
        while !isShutDown {
            if !queue.isEmpty {
                inUse += 1
                return queue.removeFirst()
            }
            condition.wait()
        }
        return nil
    }

    private func update(_ change: (PoolCore) -> Void) {
        condition.lock()
        change(self)
        condition.unlock()
    }

    /// A worker thread: owns at most one connection, opened lazily, checked before each job
    /// and replaced when broken, so the pool heals by itself after a database restart.
    private func workerLoop() {
        var connection: PGConnection?
        while let job = takeJob() {
            // Runs after the connection is back in the pool, so callers see consistent stats.
            var deliver: (@Sendable () -> Void)?
            defer {
                update { $0.inUse -= 1 }
                deliver?()
            }
            if let current = connection, !current.isIdleAndHealthy {
                logger.info("replacing a database connection that was closed or broken")
                connection = nil
                update { $0.open -= 1 }
            }
            if ContinuousClock.now > job.deadline {
                // Waited too long (the timer lost a race with this dequeue).
                let error = PGError(kind: .poolExhausted,
                                    message: "no database connection became free within \(acquireTimeout) (pool size \(size))")
                deliver = { job.fail(error) }
                continue
            }
            let active: PGConnection
            if let connection {
                active = connection
            } else {
                do {
                    active = try PGConnection(connectionString: connectionString, logger: logger)
                } catch {
                    logger.warning("cannot connect to the database: \(error)")
                    deliver = { job.fail(error) }
                    continue
                }
                connection = active
                update { $0.open += 1 }
                logger.debug("opened a database connection")
            }
            deliver = job.run(active)
            if !active.isBroken, active.transactionState != .idle {
                // The body left a transaction open; never hand that to the next job.
                try? active.execute(unsafeSQL: "ROLLBACK")
            }
            if active.isBroken || active.transactionState != .idle {
                connection = nil
                update { $0.open -= 1 }
            }
        }
        if connection != nil {
            connection = nil
            update { $0.open -= 1 }
        }
    }
}
