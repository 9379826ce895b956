import Foundation
import Logging
import Synchronization

/// One unit of work waiting for a connection. Exactly one of finishing its work and `fail` happens,
/// by whoever removes the job from the queue (under the lock): a worker, the acquire timer,
/// cancellation or shutdown.
struct PoolJob: Sendable {
    enum Work: Sendable {
        /// A body that needs a connection to itself (several statements, a transaction). It returns the
        /// hand-back of its outcome, which the worker calls once the connection is tidied up and free again.
        case session(@Sendable (PGConnection) -> @Sendable () -> Void)
        /// One statement on its own, which may share a pipeline with other waiting statements of the same
        /// kind (read-only or not, plan, statement timeout); read-only ones also share a transaction.
        case statement(Statement)
    }

    struct Statement: Sendable {
        let query: PGQuery
        let readOnly: Bool
        /// Only for read-only statements.
        let plan: PGPlanCaching
        /// The `SET statement_timeout` it runs under (the task's override); nil: the pool's.
        let timeout: String?
        let finish: @Sendable (Result<PGRows, PGError>) -> Void
    }

    let id: UInt64
    let deadline: ContinuousClock.Instant
    /// Who its connection time is charged to (`PGPool.chargedClient`); nil: the server's own work, never capped.
    let client: String?
    let work: Work
    /// Hands back an error instead (no connection, timed out, cancelled, shut down).
    let fail: @Sendable (any Error) -> Void

    var statement: Statement? {
        if case .statement(let statement) = work { statement } else { nil }
    }

    var isStatement: Bool { statement != nil }

    /// Whether this job can share a pipeline with `other`.
    func canPipeline(with other: PoolJob) -> Bool {
        guard let statement, let otherStatement = other.statement else { return false }
        return statement.readOnly == otherStatement.readOnly && statement.plan == otherStatement.plan
            && statement.timeout == otherStatement.timeout
    }
}

/// The pool's shared state and its worker threads' main loop.
///
/// `@unchecked Sendable`: every mutable field is read and written only while holding
/// `condition`'s lock; the configuration fields are immutable. (Not a `Mutex`: workers wait on the condition.)
final class PoolCore: @unchecked Sendable {
    let connectionString: String
    let size: Int
    let acquireTimeout: Duration
    let statementTimeout: Duration?
    let logger: Logger
    /// Whether connections keep named prepared statements (see `PreparedStatements`); off runs them unnamed.
    let usesPreparedStatements: Bool

    private let condition = NSCondition()
    private var queue: [PoolJob] = []
    /// Not under `condition`'s lock: an id is taken for every job, on the request's thread, and the lock is the
    /// one every worker takes to find its next job.
    private let lastJobID = Atomic<UInt64>(0)
    private var inUse = 0
    private var open = 0
    private var isShutDown = false
    /// The statement timeout of each statement pipeline running (see `maxPipelineLanes`).
    private var pipelinesRunning: [String?] = []
    /// Workers running a batch of jobs. While fewer than `size` are, a queued job is not waiting for a free
    /// connection but for a free worker to be scheduled, which a loaded machine may delay past a short acquire
    /// timeout (or, at start, for the workers' threads to begin).
    private var busyWorkers = 0
    /// Each worker's open connection's watch, by worker index (see `cancelOverdueWaits`).
    private var watches: [Int: AnswerWatch] = [:]
    /// Where connection time is charged and read back for the order of the queue; nil: first come, first served.
    let ledger: DatabaseTimeLedger?
    /// Connections running a job of each client now.
    private var heldByClient: [String: Int] = [:]
    /// The most connections one client's jobs hold at once: half the pool, so no client can take it all.
    let connectionsPerClient: Int

    init(
        connectionString: String, size: Int, acquireTimeout: Duration, statementTimeout: Duration? = nil,
        usesPreparedStatements: Bool = true, ledger: DatabaseTimeLedger? = nil, logger: Logger
    ) {
        self.connectionString = connectionString
        self.ledger = ledger
        self.connectionsPerClient = max(1, size / 2)
        self.statementTimeout = statementTimeout
        self.usesPreparedStatements = usesPreparedStatements
        self.size = size
        self.acquireTimeout = acquireTimeout
        self.logger = logger
        self.maxPipelineLanes = max(1, size / 2)
    }

    /// Starts one thread per connection slot. Blocking libpq calls run only on these
    /// threads, never on Swift's cooperative pool.
    func startWorkers() {
        for index in 0..<size {
            let thread = Thread { [self] in workerLoop(index) }
            thread.name = "pg-pool-\(index)"
            thread.start()
        }
    }

    var stats: PGPoolStats {
        condition.lock()
        defer { condition.unlock() }
        return PGPoolStats(size: size, inUse: inUse, waiting: queue.count, open: open)
    }

    /// The clients of the jobs waiting, in queue order (nil: the server's own work).
    var waitingClients: [String?] {
        condition.lock()
        defer { condition.unlock() }
        return queue.map(\.client)
    }

    func makeJobID() -> UInt64 {
        lastJobID.wrappingAdd(1, ordering: .relaxed).newValue
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
        // Every connection is at work: this job waits for one (see `DatabaseTimeLedger.wasShortRecently`).
        if busyWorkers >= size, let ledger { ledger.noteShortage(at: ledger.now()) }
        // With every lane busy, a statement waits for a lane's worker to come back for more: waking an idle
        // worker that may not take it would only cost a context switch.
        if mayTake(job) { condition.signal() }
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
        // Decided on the queue as it stands, then removed by id: `isAboutToBeTaken` reads the queue, which a
        // `removeAll(where:)` predicate must not do while the queue is being modified (an access conflict).
        let overdue = queue.filter { job in job.deadline < now && !self.isAboutToBeTaken(job) }
        let overdueIDs = Set(overdue.map(\.id))
        if !overdueIDs.isEmpty {
            queue.removeAll { overdueIDs.contains($0.id) }
            ledger.map { $0.noteShortage(at: $0.now()) }
        }
        let running = !isShutDown
        condition.unlock()
        for job in overdue { job.fail(exhaustedError) }
        cancelOverdueWaits(now: now)
        return running
    }

    /// Beyond the statement timeout the server cancels a statement itself; a wait that lasts a second longer is
    /// one it does not cover (a commit waiting for a synchronous standby) and is cancelled from here.
    private func cancelOverdueWaits(now: ContinuousClock.Instant) {
        guard let statementTimeout else { return }
        let open = update { Array($0.watches.values) }
        for watch in open { watch.cancelIfWaiting(longerThan: statementTimeout + .seconds(1), now: now) }
    }

    /// Fails the job with CancellationError if it is still waiting.
    func cancel(jobID: UInt64) {
        let job = update { core in core.queue.firstIndex { $0.id == jobID }.map { core.queue.remove(at: $0) } }
        job?.fail(CancellationError())
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

    /// The most statements one worker sends in one pipeline: enough to drain a busy queue, few enough that the
    /// first caller in the batch is not kept waiting behind many others.
    static let maxPipelineLength = 16

    /// At most this many workers run statement pipelines at once (half the pool), so the others stay free for
    /// transactions.
    let maxPipelineLanes: Int

    /// Whether an idle worker takes `job` as soon as it runs: the job waits for a thread, not for a connection.
    private func isAboutToBeTaken(_ job: PoolJob) -> Bool {
        busyWorkers < size && mayTake(job)
    }

    /// Whether a free worker may take `job` now: a session job always, a statement when it may start a pipeline;
    /// neither while its client holds its share of the connections.
    private func mayTake(_ job: PoolJob) -> Bool {
        !holdsItsShare(job.client) && (job.statement.map(mayStartPipeline) ?? true)
    }

    /// A statement that waited this long for a pipeline lane waited behind slow work: connections were short for
    /// it although some were idle (lanes are capped; see `mayStartPipeline`). Shorter waits are the pipeline's.
    private static let longWait: Duration = .milliseconds(100)

    private func holdsItsShare(_ client: String?) -> Bool {
        guard ledger != nil, let client else { return false }
        return heldByClient[client, default: 0] >= connectionsPerClient
    }

    /// Whether another worker may start a pipeline for `statement`. One lane per statement timeout runs whenever
    /// statements with it wait, so a slow search under its own timeout never holds up the short reads; another
    /// lane opens only when at least half a pipeline's worth is queued behind the running ones. Short
    /// statements then gather into long pipelines on one connection, which the database answers for far less
    /// work than as many round trips on several connections, while slow statements still spread over several
    /// connections. Measured on 2 cores (bench/README.md, "Statement pipelining"): one lane beat two lanes always,
    /// and both beat no pipelining, on the one-row route; bench/quotes.sh's first page needs more than one lane.
    private func mayStartPipeline(for statement: PoolJob.Statement) -> Bool {
        !pipelinesRunning.contains(statement.timeout)
            || (pipelinesRunning.count < maxPipelineLanes && queue.count >= Self.maxPipelineLength / 2)
    }

    /// The next jobs to run, waiting while there are none; nil once the pool is shut down. That is one session
    /// job, or up to `maxPipelineLength` statements of one kind, which share one pipeline. The first is the job of
    /// the client with the least recent database time (fair queuing over clients; first come, first served among
    /// equals); the statements that join it are taken in the same order. A statement that may not start a pipeline
    /// (`mayStartPipeline`) waits; so does every job of a client holding its share of the connections.
    private func takeJobs() -> [PoolJob]? {
        condition.lock()
        defer { condition.unlock() }
        while !isShutDown {
            let uses = recentUses()
            if let start = lightestTakeable(uses) {
                let first = queue[start]
                var picked = [start]
                if first.isStatement {
                    var clients: Set<String> = first.client.map { [$0] } ?? []
                    for index in queueOrder(uses) where picked.count < Self.maxPipelineLength && index != start {
                        let job = queue[index]
                        guard first.canPipeline(with: job) else { continue }
                        if let client = job.client, !clients.contains(client) {
                            guard !holdsItsShare(client) else { continue }
                            clients.insert(client)
                        }
                        picked.append(index)
                    }
                    pipelinesRunning.append(first.statement?.timeout)
                }
                let batch = picked.map { queue[$0] }
                for index in picked.sorted(by: >) { queue.remove(at: index) }
                inUse += batch.count
                busyWorkers += 1
                for client in Set(batch.compactMap(\.client)) { heldByClient[client, default: 0] += 1 }
                if let ledger, ContinuousClock.now - (first.deadline - acquireTimeout) > Self.longWait {
                    ledger.noteShortage(at: ledger.now())
                }
                return batch
            }
            condition.wait()
        }
        return nil
    }

    /// The recent database time of each client waiting, when the order of the queue depends on it: with a
    /// ledger and jobs of more than one client.
    private func recentUses() -> [String: Double]? {
        guard let ledger, queue.count > 1, let someClient = queue.lazy.compactMap(\.client).first,
            queue.contains(where: { $0.client != someClient })
        else { return nil }
        return ledger.recentUse(of: queue.lazy.compactMap(\.client), at: ledger.now())
    }

    /// The index of the takeable job whose client used the least database time recently; the earliest among equals.
    private func lightestTakeable(_ uses: [String: Double]?) -> Int? {
        guard let uses else { return queue.firstIndex(where: mayTake) }
        var best: (index: Int, use: Double)?
        for index in queue.indices where mayTake(queue[index]) {
            let use = queue[index].client.flatMap { uses[$0] } ?? 0
            if use < best?.use ?? .infinity { best = (index, use) }
        }
        return best?.index
    }

    /// The queue's indices, lightest client first (stable), or as queued.
    private func queueOrder(_ uses: [String: Double]?) -> [Int] {
        guard let uses else { return Array(queue.indices) }
        return queue.indices.sorted { left, right in
            let leftUse = queue[left].client.flatMap { uses[$0] } ?? 0
            let rightUse = queue[right].client.flatMap { uses[$0] } ?? 0
            return leftUse != rightUse ? leftUse < rightUse : left < right
        }
    }

    private func update<T>(_ change: (PoolCore) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return change(self)
    }

    private var exhaustedError: PGError {
        PGError(
            kind: .poolExhausted,
            message: "no database connection became free within \(acquireTimeout) (pool size \(size))")
    }

    /// Puts `override` (a `SET statement_timeout`; nil: the pool's) in effect on `connection`, unless it already
    /// is: a job's override stays after the job, and is replaced only when a job wanting another one comes.
    func useStatementTimeout(override: String?, on connection: PGConnection) throws(PGError) {
        guard connection.statementTimeoutOverride != override else { return }
        try connection.execute(unsafeSQL: override ?? PGPool.timeoutSQL(statementTimeout))
        connection.statementTimeoutOverride = override
    }

    /// Puts a pipeline's timeout in effect (`override`, nil: the pool's); the error if that failed.
    private func timeoutFailure(_ override: String?, on connection: PGConnection) -> PGError? {
        do { try useStatementTimeout(override: override, on: connection) } catch { return error }
        return nil
    }

    /// A worker thread: owns at most one connection, opened lazily, checked before each job
    /// and replaced when broken, so the pool heals by itself after a database restart.
    private func workerLoop(_ index: Int) {
        var connection: PGConnection?
        while let batch = takeJobs() {
            // Jobs not yet handed back, and hand-backs that run after the connection is free again (so
            // callers see consistent stats).
            var unfinished = batch.count
            var deliveries: [@Sendable () -> Void] = []
            var charges = ConnectionTimeCharges(batch, ledger: ledger)
            defer {
                charges.settleTheRest()
                update { core in
                    core.inUse -= unfinished
                    core.busyWorkers -= 1
                    for client in Set(batch.compactMap(\.client)) {
                        let held = core.heldByClient[client, default: 1] - 1
                        core.heldByClient[client] = held > 0 ? held : nil
                    }
                    // A job of that client may be takeable now.
                    core.condition.signal()
                    if let statement = batch[0].statement,
                        let lane = core.pipelinesRunning.firstIndex(of: statement.timeout)
                    {
                        core.pipelinesRunning.remove(at: lane)
                    }
                }
                for deliver in deliveries { deliver() }
            }
            if let current = connection, !current.isIdleAndHealthy {
                logger.info("replacing a database connection that was closed or broken")
                connection = nil
                closed(worker: index)
            }
            // Waited too long (the reaper lost a race with this dequeue).
            let now = ContinuousClock.now
            let live = batch.filter { $0.deadline >= now }
            if live.count < batch.count {
                // The message is formatted only when needed: it cost every batch a microsecond.
                let error = exhaustedError
                for job in batch where job.deadline < now { deliveries.append { job.fail(error) } }
            }
            guard !live.isEmpty else { continue }

            let active: PGConnection
            if let connection {
                active = connection
            } else {
                do {
                    active = try PGConnection(
                        connectionString: connectionString, statementTimeout: statementTimeout, logger: logger)
                } catch {
                    logger.warning("cannot connect to the database: \(error)")
                    for job in live { deliveries.append { job.fail(error) } }
                    continue
                }
                if !usesPreparedStatements { active.preparedStatements = PreparedStatements(capacity: 0) }
                connection = active
                update {
                    $0.open += 1; $0.watches[index] = active.answerWatch
                }
                logger.debug("opened a database connection")
            }

            if case .session(let run) = live[0].work {
                deliveries.append(run(active))
                charges.settle(live[0])
            } else if let error = timeoutFailure(live[0].statement?.timeout, on: active) {
                // The session's timeout is unknown now: replace it.
                for job in live { deliveries.append { job.fail(error) } }
                active.abandon()
            } else {
                // takeJobs batches statements of one kind only.
                let statements = live.compactMap(\.statement)
                let mode: PGConnection.PipelineMode =
                    statements[0].readOnly
                    ? .sharedReadOnlyTransaction(plan: statements[0].plan) : .separateTransactions
                var refusedAsReadOnly = false
                active.runPipelined(statements.map(\.query), mode: mode) { index, result in
                    charges.settle(live[index])
                    if case .failure(let error) = result, error.isReadOnlyRefusal { refusedAsReadOnly = true }
                    let finish = statements[index].finish
                    if index == statements.count - 1 {
                        deliveries.append { finish(result) }
                    } else {
                        // Hand back at once: the caller goes on while the database answers the rest.
                        unfinished -= 1
                        update { $0.inUse -= 1 }
                        finish(result)
                    }
                }
                // The server is read-only (a standby, or a primary demoted by a failover): the caller runs the
                // write again on a new connection, which libpq's target_session_attrs sends to the primary.
                if refusedAsReadOnly { active.abandon() }
            }
            if !active.isBroken, active.transactionState != .idle {
                // The body left a transaction open; never hand that to the next job.
                try? active.execute(unsafeSQL: "ROLLBACK")
            }
            if active.isBroken || active.transactionState != .idle {
                connection = nil
                closed(worker: index)
            }
        }
        if connection != nil {
            connection = nil
            closed(worker: index)
        }
    }

    /// Worker `index`'s connection is gone.
    private func closed(worker index: Int) {
        update { core in
            core.open -= 1
            core.watches[index] = nil
        }
    }
}

/// A batch's connection time, charged to each job's client as the job finishes (a statement of a pipeline: the time
/// since the previous one's answer); jobs that never ran are settled with nothing charged.
struct ConnectionTimeCharges {
    private let ledger: DatabaseTimeLedger?
    private let takenAt: Double
    private var lastAnswer: Double
    private var unsettled: [UInt64: String]

    init(_ batch: [PoolJob], ledger: DatabaseTimeLedger?) {
        self.ledger = ledger
        takenAt = ledger?.now() ?? 0
        lastAnswer = takenAt
        unsettled = [:]
        guard let ledger else { return }
        for job in batch {
            guard let client = job.client else { continue }
            unsettled[job.id] = client
            ledger.started(client, at: takenAt)
        }
    }

    mutating func settle(_ job: PoolJob) {
        guard let ledger, let client = unsettled.removeValue(forKey: job.id) else { return }
        let now = ledger.now()
        ledger.finished(client, startedAt: takenAt, charging: now - lastAnswer, at: now)
        lastAnswer = now
    }

    mutating func settleTheRest() {
        guard let ledger else { return }
        let now = ledger.now()
        for client in unsettled.values { ledger.finished(client, startedAt: takenAt, charging: 0, at: now) }
        unsettled = [:]
    }
}
