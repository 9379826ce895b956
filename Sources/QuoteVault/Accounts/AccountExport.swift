import Foundation
import PGClient

/// Everything a person keeps here, to take with them: their account and profile, and their library (favorites
/// and collections with their quotes), read in one snapshot.
public struct AccountExport: Sendable {
    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The user, and the library as JSON text: `{"favorites": [...], "collections": [...]}`, oldest first.
    public func export(_ userID: UUID) async throws -> (user: User, library: String) {
        try await pool.withConnection { connection in
            try connection.transaction { connection in
                try connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                let user = try User.load(userID, connection)
                let rows = try connection.query(Self.library(userID))
                return (user, try rows[rows.startIndex].decode("library", as: String.self))
            }
        }
    }

    /// Built by PostgreSQL as JSON; times as the API writes them (UTC, milliseconds, `Z`).
    private static func library(_ userID: UUID) -> PGQuery {
        """
        WITH stamp(format) AS (SELECT 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        SELECT json_build_object(
            'favorites', COALESCE((
                SELECT json_agg(json_build_object(
                           'quote_id', f.quote_id, 'added_at', to_char(f.created_at AT TIME ZONE 'UTC', s.format),
                           'text', q.text, 'author', q.author, 'category', q.category)
                       ORDER BY f.created_at, f.quote_id)
                FROM user_favorites f JOIN quotes q ON q.id = f.quote_id, stamp s
                WHERE \(RowOwner.favorites.owned("f", by: userID))), '[]'::json),
            'collections', COALESCE((
                SELECT json_agg(json_build_object(
                           'id', c.id, 'name', c.name,
                           'created_at', to_char(c.created_at AT TIME ZONE 'UTC', s.format),
                           'updated_at', to_char(c.updated_at AT TIME ZONE 'UTC', s.format),
                           'quotes', COALESCE((
                               SELECT json_agg(json_build_object(
                                          'quote_id', cq.quote_id,
                                          'added_at', to_char(cq.added_at AT TIME ZONE 'UTC', s.format),
                                          'text', q.text, 'author', q.author, 'category', q.category)
                                      ORDER BY cq.added_at, cq.quote_id)
                               FROM collection_quotes cq JOIN quotes q ON q.id = cq.quote_id
                               WHERE cq.collection_id = c.id), '[]'::json))
                       ORDER BY c.created_at, c.id)
                FROM collections c, stamp s
                WHERE \(RowOwner.collections.owned("c", by: userID))), '[]'::json)
        )::text AS library
        """
    }
}
