import Foundation
import PGClient
import Synchronization

/// Throttle refusals remembered in memory until they expire, at most `capacity` of them (a flood of distinct
/// keys cannot grow it without bound; past the capacity a refusal is simply not remembered).
final class RecentRefusals: Sendable {
    private let until = Mutex<[String: ContinuousClock.Instant]>([:])
    private let capacity: Int

    init(capacity: Int = 10_000) { self.capacity = capacity }

    /// Whole seconds left of the refusal of `key`, or nil when there is none.
    func remaining(_ key: String) -> Int? {
        let now = ContinuousClock.now
        return until.withLock { until -> Int? in
            guard let end = until[key] else { return nil }
            guard end > now else {
                until[key] = nil
                return nil
            }
            return max(1, Int((end - now).components.seconds) + 1)
        }
    }

    /// Under a transaction-scoped advisory lock on `namespace:key` (so every instance agrees), throws
    /// `rateLimited` when `attempts` (a table with `created_at` and a condition naming the key's rows) already hold
    /// `limit` within the last `window` seconds. The refusal is remembered for its retry time, capped at
    /// `rememberedFor` seconds (nil: no cap) so that a limit lifted meanwhile is seen again soon.
    /// - Returns: the attempts counted (fewer than `limit`).
    @discardableResult
    func check(
        _ key: String, namespace: String, limit: Int, window: Int, attempts: PGQuery, rememberedFor: Int? = 60,
        _ connection: PGConnection
    ) throws -> Int {
        try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("\(namespace):\(key)"), 0))")
        let row = try connection.query(
            """
            SELECT count(*)::int8 AS attempts,
                   coalesce(ceil(extract(epoch FROM min(created_at) + \(window) * interval '1 second' - now())), 1)
                   ::int8 AS retry
            FROM \(attempts) AND created_at > now() - \(window) * interval '1 second'
            """)[0]
        let counted = try row.decode("attempts", as: Int.self)
        guard counted >= limit else { return counted }
        let seconds = max(1, try row.decode("retry", as: Int.self))
        remember(key, seconds: min(seconds, rememberedFor ?? seconds))
        throw Failure.rateLimited(retryAfterSeconds: seconds)
    }

    func remember(_ key: String, seconds: Int) {
        let now = ContinuousClock.now
        until.withLock { until in
            if until.count >= capacity { until = until.filter { $0.value > now } }
            guard until.count < capacity else { return }
            until[key] = now + .seconds(seconds)
        }
    }
}
