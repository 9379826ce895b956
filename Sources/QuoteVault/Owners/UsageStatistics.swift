import Foundation
import PGClient

/// The overview's figures from the database: sign-ups per day, active users, the database's size.
///
/// "Active" means the user signed in or refreshed a session in the window (a session's `created_at` or
/// `refreshed_at`): the app refreshes its token whenever it is used for more than an hour, so that is the
/// server's best evidence of use without logging requests per user.
public struct UsageStatistics: Sendable {
    public struct Figures: Sendable {
        /// Sign-ups per UTC day, oldest first, `days` entries ending today (days without sign-ups are 0).
        public let signUps: [(date: PGDate, count: Int)]
        public let active7Days: Int
        public let active30Days: Int
        public let databaseBytes: Int64
    }

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public func figures(days: Int = 30, now: Date = Date()) async throws -> Figures {
        let today = PGDate(now)
        let first = today.adding(days: -(days - 1))
        let rows = try await pool.query(
            """
            SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*)::int AS count FROM users
            WHERE created_at >= \(first)::timestamp AT TIME ZONE 'UTC' GROUP BY 1
            """)
        var counts: [PGDate: Int] = [:]
        for row in rows { counts[try row.decode("day")] = try row.decode("count") }
        let signUps = (0..<days).map { offset in
            let date = first.adding(days: offset)
            return (date, counts[date] ?? 0)
        }
        let active = try await pool.query(
            """
            SELECT count(DISTINCT user_id) FILTER (WHERE used_at > now() - interval '7 days')::int AS week,
                   count(DISTINCT user_id)::int AS month
            FROM (SELECT user_id, greatest(created_at, refreshed_at) AS used_at FROM sessions) s
            WHERE used_at > now() - interval '30 days'
            """)[0]
        let size = try await pool.query("SELECT pg_database_size(current_database()) AS bytes")[0]
        return Figures(
            signUps: signUps, active7Days: try active.decode("week"),
            active30Days: try active.decode("month"),
            databaseBytes: try size.decode("bytes"))
    }
}
