import Foundation
import PGClient

/// How many users favorited each quote of a page, for the console's list: one count over the page's ids (an index
/// scan of `user_favorites_quote_id_idx` per id), so a page costs the same however many quotes there are.
public struct FavoriteCounts: Sendable {
    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The count of each id; an id nobody favorited is absent.
    public func of(_ ids: [UUID]) async throws -> [UUID: Int] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await pool.query(
            """
            SELECT quote_id, count(*)::int8 AS favorites FROM user_favorites WHERE quote_id = ANY(\(ids)::uuid[])
            GROUP BY quote_id
            """)
        var counts: [UUID: Int] = [:]
        for row in rows { counts[try row.decode("quote_id")] = try row.decode("favorites") }
        return counts
    }
}
