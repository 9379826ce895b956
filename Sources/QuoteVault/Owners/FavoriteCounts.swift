import Foundation
import PGClient

/// How many users favorited each quote of a page, for the console's list: read from `quote_favorite_counts`
/// (kept by a trigger on `user_favorites`), one primary-key lookup per id.
public struct FavoriteCounts: Sendable {
    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The count of each id; an id nobody favorited is absent.
    public func of(_ ids: [UUID]) async throws -> [UUID: Int] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await pool.query(
            """
            SELECT quote_id, favorites::int8 AS favorites FROM quote_favorite_counts
            WHERE quote_id = ANY(\(ids)::uuid[]) AND favorites > 0
            """)
        var counts: [UUID: Int] = [:]
        for row in rows { counts[try row.decode("quote_id")] = try row.decode("favorites") }
        return counts
    }
}
