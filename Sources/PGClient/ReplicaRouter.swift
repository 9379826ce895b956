import Foundation
import Logging

/// Where a read pool (`PGPool(replicas:primary:…)`) sends its work: to a healthy replica in turn, else to the
/// primary's pool.
///
/// A replica is healthy when its last check connected and found it at most `maxLag` behind the primary. A monitor
/// thread checks every replica each `checkInterval` on a connection of its own; a replica whose job fails for lack
/// of a connection is taken out at once, and every replica comes back by itself once a check passes again. A read
/// that failed on a replica for want of a connection, a free slot, or because recovery cancelled it is run again on
/// the primary: reads have no effects, so running one twice is safe.
///
/// `@unchecked Sendable`: `healthy`, `next` and the counters are touched only under `lock`.
final class ReplicaRouter: @unchecked Sendable {
    struct Replica: Sendable {
        let pool: PGPool
        let connectionString: String
    }

    let replicas: [Replica]
    let primary: PGPool
    let maxLag: Duration
    let checkInterval: Duration
    private let logger: Logger

    private let lock = NSLock()
    private var healthy: [Bool]
    private var next = 0
    private var isShutDown = false
    private var servedByReplicas = 0
    private var servedByPrimary = 0

    init(replicas: [Replica], primary: PGPool, maxLag: Duration, checkInterval: Duration, logger: Logger) {
        self.replicas = replicas
        self.primary = primary
        self.maxLag = maxLag
        self.checkInterval = checkInterval
        self.logger = logger
        // Unknown until the first check: start on the primary rather than send reads to a replica that lags.
        healthy = Array(repeating: false, count: replicas.count)
    }

    /// Runs `work` on a healthy replica's pool, or on the primary's when none is healthy or the replica failed it.
    func run<T>(_ work: (PGPool) async throws -> T) async throws -> T {
        if let index = pickReplica() {
            do {
                let result = try await work(replicas[index].pool)
                count(replica: true)
                return result
            } catch let error as PGError where Self.shouldRetryOnPrimary(error) {
                // A write sent to a read pool by mistake is refused by the replica, which is still fine for reads.
                if error.isConnectionFailure, !error.isReadOnlyRefusal { markDown(index, reason: error.description) }
            }
        }
        let result = try await work(primary)
        count(replica: false)
        return result
    }

    /// A replica's failure that the primary may not share.
    static func shouldRetryOnPrimary(_ error: PGError) -> Bool {
        // 40001 on a standby: "canceling statement due to conflict with recovery".
        error.isConnectionFailure || error.kind == .poolExhausted || error.sqlState == .serializationFailure
    }

    private func pickReplica() -> Int? {
        lock.withLock {
            for offset in 0..<replicas.count {
                let index = (next + offset) % replicas.count
                if healthy[index] {
                    next = index + 1
                    return index
                }
            }
            return nil
        }
    }

    private func count(replica: Bool) {
        lock.withLock {
            if replica { servedByReplicas += 1 } else { servedByPrimary += 1 }
        }
    }

    private func markDown(_ index: Int, reason: String) {
        let changed = lock.withLock {
            defer { healthy[index] = false }
            return healthy[index]
        }
        if changed { logger.warning("read replica \(index) skipped: \(reason)") }
    }

    /// Reads served by replicas and by the primary since the start.
    var readsServed: (replicas: Int, primary: Int) { lock.withLock { (servedByReplicas, servedByPrimary) } }

    /// Which replicas are in use right now.
    var healthyReplicas: [Bool] { lock.withLock { healthy } }

    // MARK: Monitoring

    /// Starts the thread that checks every replica each `checkInterval` until `shutdown()`.
    func startMonitor() {
        let thread = Thread { [weak self] in
            var connections = [PGConnection?](repeating: nil, count: self?.replicas.count ?? 0)
            while let router = self, router.checkAll(&connections) {
                let interval = router.checkInterval
                Thread.sleep(forTimeInterval: Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)
            }
        }
        thread.name = "pg-replica-monitor"
        thread.start()
    }

    func shutdown() {
        lock.withLock { isShutDown = true }
        for replica in replicas { replica.pool.shutdown() }
    }

    /// One round of checks; false once shut down.
    private func checkAll(_ connections: inout [PGConnection?]) -> Bool {
        for index in replicas.indices {
            let verdict = check(index, &connections[index])
            let previous = lock.withLock {
                defer { healthy[index] = verdict == nil }
                return healthy[index]
            }
            if previous, let verdict {
                logger.warning("read replica \(index) skipped: \(verdict)")
            } else if !previous, verdict == nil {
                logger.info("read replica \(index) in use")
            }
        }
        return lock.withLock { !isShutDown }
    }

    /// Where the replica stands: WAL received but not yet replayed, if any, and the age of the last transaction it
    /// replayed. A server not in recovery (or one that replayed all it received) lags by nothing.
    static let positionQuery: PGQuery = """
        SELECT CASE WHEN pg_is_in_recovery() AND pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn()
                    THEN pg_last_wal_receive_lsn()::text END AS unreplayed
        """

    /// Whether replay reached `received`, and the age in seconds of the last replayed transaction.
    static func catchUpQuery(_ received: String) -> PGQuery {
        """
        SELECT pg_last_wal_replay_lsn() >= \(received)::pg_lsn AS caught_up,
               coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 1e9)::float8 AS age
        """
    }

    /// The replay lag in seconds. The age of the last replayed transaction alone would count an idle primary's
    /// quiet time as lag whenever a check lands in the instant between a commit's arrival and its replay: so when
    /// WAL waits, the check looks again 100 ms later, and replay that has reached what was waiting means no lag
    /// worth the name.
    private static func replayLag(_ connection: PGConnection) throws -> Double {
        guard let received = try connection.query(positionQuery).first?.decode("unreplayed", as: String?.self) else { return 0 }
        Thread.sleep(forTimeInterval: 0.1)
        guard let row = try connection.query(catchUpQuery(received)).first else { return .infinity }
        return try row.decode("caught_up", as: Bool.self) ? 0.1 : row.decode("age", as: Double.self)
    }

    /// nil when the replica is fit for reads, else why not.
    private func check(_ index: Int, _ connection: inout PGConnection?) -> String? {
        do {
            if connection == nil || connection?.isIdleAndHealthy == false {
                connection = try PGConnection(connectionString: replicas[index].connectionString, logger: logger)
            }
            let lag = try Self.replayLag(connection!)
            let bound = Double(maxLag.components.seconds) + Double(maxLag.components.attoseconds) / 1e18
            return lag <= bound ? nil : "replay lags \(lag) s (bound \(bound) s)"
        } catch {
            connection = nil
            return "\(error)"
        }
    }
}
