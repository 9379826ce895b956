import Logging
import PGClient

/// Forgets what the accounts' tables keep only for a while, so they do not grow with every login forever:
/// throttle events older than every window (`RateLimiter.eventRetention`), sessions a day after they ended
/// (their refresh tokens go with them; an access token of theirs has long expired), reset links a day after
/// they expired (with their recovery flows), and mail a day after it was written (a reset link in it has expired;
/// mail never delivered by then is given up, with a warning). Every pass deletes at most `batchSize` rows of each,
/// each found by an index walk that stops at the first row not yet due.
public final class AccountHousekeeping: Sendable {
    /// How long an ended session, an expired reset link or a written mail is kept.
    public static let retention: Duration = .seconds(24 * 3600)

    private let pool: PGPool
    private let logger: Logger
    private let task = BackgroundTask()

    public init(pool: PGPool, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    /// Starts a pass every `interval`, at most `passes` bounded passes each time (tests call `pruneOnce`).
    public func start(interval: Duration = .seconds(60), passes: Int = 10) {
        task.prune(every: interval, passes: passes, logger: logger, failure: "account housekeeping pass failed") {
            [self] in
            try await pruneOnce()
        }
    }

    public func stop() { task.cancel() }

    /// Whether the loop has ended after `stop()` (a pass in flight finishes first).
    public var hasEnded: Bool { task.hasEnded }

    /// One bounded pass: how many rows it deleted (0 when nothing was due).
    /// - Parameter retention: how long ended sessions, expired links and mail are kept (tests pass 0).
    @discardableResult
    public func pruneOnce(batchSize: Int = 1000, retention: Duration = retention) async throws -> Int {
        let kept = retention.components.seconds
        let events = RateLimiter.eventRetention.components.seconds
        let (deleted, undelivered) = try await pool.withTransaction { connection in
            // Oldest ids first: a walk of the primary key that reads at most `batchSize` rows.
            let authEvents = try connection.query(
                """
                DELETE FROM auth_events WHERE id IN (
                    SELECT id FROM (SELECT id, created_at FROM auth_events ORDER BY id LIMIT \(batchSize)) AS oldest
                    WHERE created_at < now() - \(events) * interval '1 second')
                """
            ).affectedRows
            let sessions = try connection.query(
                """
                DELETE FROM sessions WHERE id IN (
                    SELECT id FROM sessions
                    WHERE least(expires_at, coalesce(revoked_at, 'infinity'::timestamptz))
                          < now() - \(kept) * interval '1 second'
                    LIMIT \(batchSize))
                """
            ).affectedRows
            let resetLinks = try connection.query(
                """
                DELETE FROM password_reset_tokens WHERE token_hash IN (
                    SELECT token_hash FROM password_reset_tokens
                    WHERE expires_at < now() - \(kept) * interval '1 second' LIMIT \(batchSize))
                """
            ).affectedRows
            let mail = try connection.query(
                """
                WITH deleted AS (
                    DELETE FROM mail_outbox WHERE id IN (
                        SELECT id FROM (SELECT id, created_at FROM mail_outbox ORDER BY id LIMIT \(batchSize)) AS oldest
                        WHERE created_at < now() - \(kept) * interval '1 second')
                    RETURNING sent_at)
                SELECT count(*)::int8 AS deleted, count(*) FILTER (WHERE sent_at IS NULL)::int8 AS undelivered
                FROM deleted
                """
            ).first
            let mailDeleted = try mail?.decode("deleted", as: Int.self) ?? 0
            let mailUndelivered = try mail?.decode("undelivered", as: Int.self) ?? 0
            return (authEvents + sessions + resetLinks + mailDeleted, mailUndelivered)
        }
        if undelivered > 0 {
            logger.warning(
                "mail given up: never delivered within a day", metadata: ["mails": .stringConvertible(undelivered)])
        }
        return deleted
    }
}
