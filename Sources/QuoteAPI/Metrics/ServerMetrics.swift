import Foundation
import Synchronization
import HTTPServer
import PGClient
import Prometheus
import QuoteVault

/// The server's Prometheus metrics, kept in swift-prometheus' registry (one per application, so that several
/// applications in one test process never share counts; `MetricsSystem.bootstrap` would be process-global).
///
/// Requests are counted as they are answered (the HTTP server's observer hook); the gauges — pool, hashing
/// queue, mail backlog, memory — are read when `/metrics` is scraped, from memory only, so a scrape answers
/// even while the database is down.
public final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()

    /// Request latency buckets, in seconds: from a cached answer to a slow search.
    private static let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    /// Methods that get their own label; anything else a client sends is counted as `other`, so a client
    /// cannot grow the label set (routes are patterns or `unmatched`, statuses are three digits).
    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    // nonisolated(unsafe): the descriptor type is a struct of `let` strings that swift-prometheus does not mark
    // Sendable; these are never mutated.
    private static func metric(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: unit, helpText: help)
    }
    nonisolated(unsafe) private static let requests = metric(
        "http_requests", "total", "Requests answered, by method, route pattern and status.")
    nonisolated(unsafe) private static let latency = metric(
        "http_request_duration", "seconds", "Time from request start to response, by route pattern.")
    nonisolated(unsafe) private static let poolConnections = metric(
        "db_pool", "connections", "Database pool: size, connections in use, connections open.")
    nonisolated(unsafe) private static let poolWaiting = metric(
        "db_pool_waiting", "jobs", "Database jobs waiting for a free pool connection.")
    nonisolated(unsafe) private static let publicPoolConnections = metric(
        "db_public_pool", "connections",
        "Database pool of public reads (DB_PUBLIC_POOL_SIZE): size, connections in use, connections open.")
    nonisolated(unsafe) private static let publicPoolWaiting = metric(
        "db_public_pool_waiting", "jobs", "Public reads waiting for a free connection.")
    nonisolated(unsafe) private static let readsServed = metric(
        "db_reads", "served", "Public reads since start, by what served them (replica: a node in recovery, or primary)."
    )
    nonisolated(unsafe) private static let readNodes = metric(
        "db_read_nodes", "in_use", "Read URLs in use now, by what the node was at its last check (pg_is_in_recovery())."
    )
    nonisolated(unsafe) private static let healthyReplicas = metric(
        "db_read_replicas", "healthy", "Read replicas in use now (reachable, within REPLICA_MAX_LAG).")
    nonisolated(unsafe) private static let hashingQueue = metric(
        "password_hashing_queue", "depth", "Password hashes waiting for a hashing thread.")
    nonisolated(unsafe) private static let mailBacklog = metric(
        "mail_outbox", "backlog", "Mails not yet delivered, as of the delivery loop's last pass.")
    nonisolated(unsafe) private static let residentMemory = metric(
        "process_resident_memory", "bytes", "Resident memory of the server process.")

    nonisolated(unsafe) private static let backupLastSuccess = metric(
        "backup_last_success", "timestamp_seconds",
        "When the last successful backup of the embedded database ended (Unix time).")
    nonisolated(unsafe) private static let backupLastSize = metric(
        "backup_last_size", "bytes",
        "Size of the last successful backup: the database it restores, and what it added to the repository.")
    nonisolated(unsafe) private static let walArchiveFailures = metric(
        "wal_archive_failures", "total",
        "WAL segments PostgreSQL failed to archive since it started (pg_stat_archiver).")
    nonisolated(unsafe) private static let oldestRestorable = metric(
        "backup_oldest_restorable", "timestamp_seconds", "The oldest time a restore can reach (Unix time).")

    /// Backups of the embedded database, set by the server's backup schedule.
    public let backups = BackupStatus()
    /// The last hour per minute, for the console's overview.
    public let traffic = TrafficHistory()

    public init() {}

    /// Exposition text rendered elsewhere (the Realtime door's counters), appended to every scrape.
    private let included = Mutex<[@Sendable () -> String]>([])

    public func include(_ source: @escaping @Sendable () -> String) { included.withLock { $0.append(source) } }

    /// Counts one answered request; called by the HTTP server on the thread that answered it.
    public func observe(_ request: CompletedRequest) {
        let method = Self.knownMethods.contains(request.method.rawValue) ? request.method.rawValue : "other"
        let key = SeriesKey(method: method, route: request.route, status: request.status)
        // The registry's lookup builds the metric's name and checks its help text on every call, a cost the
        // cheapest routes feel: remember each series' objects instead. The keys are bounded (methods, route
        // patterns, statuses), so this table is too.
        let series =
            knownSeries.withLock { $0[key] }
            ?? {
                let made = (
                    registry.makeCounter(
                        descriptor: Self.requests,
                        labels: [("method", method), ("route", request.route), ("status", String(request.status))]),
                    registry.makeDurationHistogram(
                        descriptor: Self.latency, labels: [("route", request.route)], buckets: Self.latencyBuckets)
                )
                knownSeries.withLock { $0[key] = made }
                return made
            }()
        series.0.increment()
        series.1.record(request.duration)
        traffic.record(status: request.status, duration: request.duration, delayedRefusal: request.delayedRefusal)
    }

    private struct SeriesKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    private let knownSeries = Mutex<[SeriesKey: (Counter, DurationHistogram)]>([:])

    /// The exposition text of every metric, with the gauges read now.
    public func render(
        pool: PGPoolStats, publicPool: PGPoolStats? = nil, hashingQueueDepth: Int, mailBacklog: Int?,
        replicaUse: (replicaReads: Int, primaryReads: Int, healthy: [Bool], standby: [Bool])? = nil
    )
        -> [UInt8]
    {
        let pools =
            [(pool, Self.poolConnections, Self.poolWaiting)]
            + (publicPool.map { [($0, Self.publicPoolConnections, Self.publicPoolWaiting)] } ?? [])
        for (stats, connections, waiting) in pools {
            gauge(connections, [("state", "size")], stats.size)
            gauge(connections, [("state", "in_use")], stats.inUse)
            gauge(connections, [("state", "open")], stats.open)
            gauge(waiting, [], stats.waiting)
        }
        gauge(Self.hashingQueue, [], hashingQueueDepth)
        if let replicaUse {
            gauge(Self.readsServed, [("served_by", "replica")], replicaUse.replicaReads)
            gauge(Self.readsServed, [("served_by", "primary")], replicaUse.primaryReads)
            gauge(Self.healthyReplicas, [], replicaUse.healthy.filter { $0 }.count)
            let inUse = zip(replicaUse.healthy, replicaUse.standby).filter(\.0)
            gauge(Self.readNodes, [("role", "replica")], inUse.filter(\.1).count)
            gauge(Self.readNodes, [("role", "primary")], inUse.filter { !$0.1 }.count)
        }
        gauge(Self.mailBacklog, [], mailBacklog)
        gauge(Self.residentMemory, [], ProcessMemory.residentBytes())
        if let backup = backups.snapshot {
            gauge(Self.backupLastSuccess, [], backup.lastSuccess?.timeIntervalSince1970)
            gauge(Self.backupLastSize, [("of", "database")], backup.lastDatabaseBytes.map(Double.init))
            gauge(Self.backupLastSize, [("of", "repository")], backup.lastRepositoryBytes.map(Double.init))
            gauge(Self.walArchiveFailures, [], backup.archiveFailures)
            gauge(Self.oldestRestorable, [], backup.oldestRestorable?.timeIntervalSince1970)
        }
        return registry.emitToBuffer() + included.withLock { $0 }.flatMap { Array($0().utf8) }
    }

    /// Sets the gauge of `descriptor` and `labels` (left unset without a value).
    private func gauge(_ descriptor: MetricNameDescriptor, _ labels: [(String, String)], _ value: Int?) {
        gauge(descriptor, labels, value.map(Double.init))
    }

    private func gauge(_ descriptor: MetricNameDescriptor, _ labels: [(String, String)], _ value: Double?) {
        if let value { registry.makeGauge(descriptor: descriptor, labels: labels).set(value) }
    }
}
