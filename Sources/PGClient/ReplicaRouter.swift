import Foundation
import Logging
import Synchronization

/// Where a read pool (`PGPool(replicas:primary:…)`) sends its work: to a healthy replica in turn, else to the
/// primary's pool.
///
/// A replica is healthy when its last check connected and found it at most `maxLag` behind the primary. A monitor
/// thread checks every replica each `checkInterval` on a connection of its own; a replica whose job fails for lack
/// of a connection is taken out at once, and every replica comes back by itself once a check passes again. A read
/// that failed on a replica for want of a connection, a free slot, or because recovery cancelled it is run again on
/// the next healthy replica, then on the primary; and when the primary fails it too (a failover under way), once
/// more on every read URL, healthy or not, on a fresh connection: behind a load balancer's read port one URL leads
/// to whichever standby is left. Reads have no effects, so running one twice is safe.
///
/// Reads are counted by what the node that served them is (`pg_is_in_recovery()`, learnt by each check), not by
/// the URL it was reached through: after a failover a read URL may lead to the primary.
final class ReplicaRouter: Sendable {
    struct Replica: Sendable {
        let pool: PGPool
        let connectionString: String
    }

    let replicas: [Replica]
    let primary: PGPool
    let maxLag: Duration
    let checkInterval: Duration
    private let logger: Logger

    private let state: Mutex<State>

    private struct State {
        var healthy: [Bool]
        /// Whether each replica was in recovery at its last check.
        var isStandby: [Bool]
        var next = 0
        var isShutDown = false
        var servedByReplicas = 0
        var servedByPrimary = 0
    }

    init(replicas: [Replica], primary: PGPool, maxLag: Duration, checkInterval: Duration, logger: Logger) {
        self.replicas = replicas
        self.primary = primary
        self.maxLag = maxLag
        self.checkInterval = checkInterval
        self.logger = logger
        // Unknown until the first check: start on the primary rather than send reads to a replica that lags.
        state = Mutex(
            State(
                healthy: Array(repeating: false, count: replicas.count),
                isStandby: Array(repeating: false, count: replicas.count)))
    }

    /// Runs `work` on a healthy replica's pool, or on another node when none is healthy or the node failed it:
    /// the other healthy replicas, the primary, then every replica once more (see the type's comment).
    func run<T>(_ work: (PGPool) async throws -> T) async throws -> T {
        var failed = Set<Int>()
        while let index = pickReplica(excluding: failed) {
            do {
                return try await run(work, onReplica: index)
            } catch let error as PGError where Self.shouldRetryElsewhere(error) {
                failed.insert(index)
                // A write sent to a read pool by mistake is refused by the replica, which is still fine for reads.
                if error.isConnectionFailure, !error.isReadOnlyRefusal { record(index, verdict: error.description) }
            }
        }
        do {
            let result = try await work(primary)
            count(replica: false)
            return result
        } catch let error as PGError where error.isConnectionFailure || error.kind == .poolExhausted {
            // The primary is missing too, as while a failover or switchover hands it over. A replica taken out a
            // moment ago (a connection cut as its node left the read port) may well answer on a new connection.
            for index in replicas.indices {
                do {
                    return try await run(work, onReplica: index)
                } catch let replicaError as PGError where Self.shouldRetryElsewhere(replicaError) {
                    continue
                }
            }
            throw error
        }
    }

    private func run<T>(_ work: (PGPool) async throws -> T, onReplica index: Int) async throws -> T {
        let result = try await work(replicas[index].pool)
        count(replica: state.withLock { $0.isStandby[index] })
        return result
    }

    /// A failure on one node that another may not share.
    static func shouldRetryElsewhere(_ error: PGError) -> Bool {
        // 40001 on a standby: "canceling statement due to conflict with recovery".
        error.isConnectionFailure || error.kind == .poolExhausted || error.sqlState == .serializationFailure
    }

    /// The next healthy replica in turn, apart from `excluded`.
    private func pickReplica(excluding excluded: Set<Int>) -> Int? {
        state.withLock { state in
            for offset in 0..<replicas.count {
                let index = (state.next + offset) % replicas.count
                if state.healthy[index], !excluded.contains(index) {
                    state.next = index + 1
                    return index
                }
            }
            return nil
        }
    }

    private func count(replica: Bool) {
        state.withLock { state in
            if replica { state.servedByReplicas += 1 } else { state.servedByPrimary += 1 }
        }
    }

    /// Records replica `index` as fit for reads (`verdict` nil) or not and why, and logs a change.
    private func record(_ index: Int, verdict: String?, standby: Bool? = nil) {
        let previous = state.withLock { state in
            defer {
                state.healthy[index] = verdict == nil
                if let standby { state.isStandby[index] = standby }
            }
            return state.healthy[index]
        }
        if previous, let verdict {
            logger.warning("read replica \(index) skipped: \(verdict)")
        } else if !previous, verdict == nil {
            logger.info("read replica \(index) in use")
        }
    }

    /// Reads served by standbys and by a primary (the fallback, or a read URL that leads to one) since the start.
    var readsServed: (replicas: Int, primary: Int) { state.withLock { ($0.servedByReplicas, $0.servedByPrimary) } }

    /// Which replicas are in use right now.
    var healthyReplicas: [Bool] { state.withLock { $0.healthy } }

    /// Which replicas were in recovery (standbys) at their last check.
    var standbyReplicas: [Bool] { state.withLock { $0.isStandby } }

    // MARK: Monitoring

    /// Starts the thread that checks every replica each `checkInterval` until `shutdown()`.
    func startMonitor() {
        let thread = Thread { [weak self] in
            var connections = [PGConnection?](repeating: nil, count: self?.replicas.count ?? 0)
            var lags = [ReplayLag](repeating: ReplayLag(), count: connections.count)
            while let router = self, router.checkAll(&connections, &lags) {
                Thread.sleep(forTimeInterval: router.checkInterval / .seconds(1))
            }
        }
        thread.name = "pg-replica-monitor"
        thread.start()
    }

    func shutdown() {
        state.withLock { $0.isShutDown = true }
        for replica in replicas { replica.pool.shutdown() }
    }

    /// One round of checks; false once shut down.
    private func checkAll(_ connections: inout [PGConnection?], _ lags: inout [ReplayLag]) -> Bool {
        for index in replicas.indices {
            let (verdict, standby) = check(index, &connections[index], &lags[index])
            record(index, verdict: verdict, standby: standby)
        }
        return state.withLock { !$0.isShutDown }
    }

    /// nil when the replica is fit for reads, else why not; and whether it is in recovery, when it answered.
    private func check(_ index: Int, _ connection: inout PGConnection?, _ lag: inout ReplayLag) -> (String?, Bool?) {
        do {
            if connection == nil || connection?.isIdleAndHealthy == false {
                connection = try PGConnection(connectionString: replicas[index].connectionString, logger: logger)
            }
            let node = connection!
            let read = { try ReplayLag.reading(node.query(ReplayLag.query)[0]) }
            let reading = try read()
            let seconds = try lag.update(reading, at: .now) {
                Thread.sleep(forTimeInterval: 0.1)
                return try read()
            }
            let bound = maxLag / .seconds(1)
            return (seconds <= bound ? nil : "replay lags \(seconds) s (bound \(bound) s)", reading.inRecovery)
        } catch {
            connection = nil
            return ("\(error)", nil)
        }
    }
}
