import Foundation
import Logging
import PGClient

/// Prunes what offline sync keeps for a limited time: the change history (30 days), remembered operation
/// results (30 days) and idempotency keys (24 hours). Every pass deletes at most `batchSize` rows of each, so a
/// backlog costs several short passes instead of one long lock; several instances may prune at once.
public final class SyncMaintenance: Sendable {
    public static let operationRetention: Duration = .seconds(30 * 24 * 3600)
    public static let idempotencyRetention: Duration = .seconds(24 * 3600)

    private let pool: PGPool
    private let logger: Logger
    private let task = BackgroundTask()

    public init(pool: PGPool, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    /// Starts pruning every `interval`, at most `passes` bounded passes each time (tests call `pruneOnce`).
    public func start(interval: Duration = .seconds(60), passes: Int = 10) {
        task.prune(every: interval, passes: passes, logger: logger, failure: "sync pruning pass failed") { [self] in
            try await pruneOnce()
        }
    }

    public func stop() { task.cancel() }

    /// Whether the loop has ended after `stop()` (a pass in flight finishes first).
    public var hasEnded: Bool { task.hasEnded }

    /// One bounded pass: returns how many rows it deleted (0 when nothing was due).
    /// - Parameter historyRetention: how old a change must be to go (tests pass a shorter one).
    @discardableResult
    public func pruneOnce(batchSize: Int = 1000, historyRetention: Duration = SyncFeed.historyRetention) async throws
        -> Int
    {
        let history = Self.seconds(historyRetention)
        let operations = Self.seconds(Self.operationRetention)
        let keys = Self.seconds(Self.idempotencyRetention)
        return try await pool.withTransaction { connection in
            // The pruned changes move each user's `pruned_through` to the newest of them, so that every token
            // before a pruned change answers 410 (older changes of the user left for a later pass change nothing).
            let changes =
                try connection.query(
                    """
                    WITH doomed AS (
                        SELECT user_id, seq FROM sync_changes
                        WHERE changed_at < now() - make_interval(secs => \(history)) LIMIT \(batchSize)),
                    deleted AS (
                        DELETE FROM sync_changes s USING doomed d WHERE s.user_id = d.user_id AND s.seq = d.seq
                        RETURNING s.user_id, s.seq)
                    UPDATE sync_positions p SET pruned_through = greatest(p.pruned_through, m.seq)
                    FROM (SELECT user_id, max(seq) AS seq FROM deleted GROUP BY user_id) m
                    WHERE p.user_id = m.user_id
                    RETURNING (SELECT count(*) FROM deleted)::int8 AS pruned
                    """
                ).first?.decode("pruned", as: Int.self) ?? 0
            let results = try connection.query(
                """
                DELETE FROM sync_operations WHERE (user_id, id) IN (
                    SELECT user_id, id FROM sync_operations
                    WHERE applied_at < now() - make_interval(secs => \(operations)) LIMIT \(batchSize))
                """
            ).affectedRows
            let expiredKeys = try connection.query(
                """
                DELETE FROM idempotency_keys WHERE (user_id, key) IN (
                    SELECT user_id, key FROM idempotency_keys
                    WHERE created_at < now() - make_interval(secs => \(keys)) LIMIT \(batchSize))
                """
            ).affectedRows
            return changes + results + expiredKeys
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
