import Foundation
import PGClient

/// A favorite as the API lists it.
public struct Favorite: Sendable {
    public let quote: Quote
    public let favoritedAt: Date
}

/// Each user's favorites. Every query carries the caller's ownership (`RowOwner`) in its WHERE: a user can only ever
/// read or change their own rows. Adds and removes are idempotent; the primary key decides races.
public struct FavoritesService: Sendable {
    let pool: PGPool

    /// Newest favorite first.
    public func list(userID: UUID, page: PageRequest) async throws -> Page<Favorite> {
        try await pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT \(unsafeSQL: Quote.columns()), f.created_at AS favorited_at
                FROM user_favorites f JOIN quotes ON quotes.id = f.quote_id
                WHERE \(RowOwner.favorites.owned("f", by: userID))
                ORDER BY f.created_at DESC, f.quote_id DESC
                LIMIT \(page.size + 1) OFFSET \(page.offset)
                """)
            let total =
                try connection.query(
                    """
                    SELECT count(*)::int8 AS total FROM user_favorites f
                    WHERE \(RowOwner.favorites.owned("f", by: userID))
                    """
                )
                .first?.decode("total", as: Int.self) ?? 0
            return try Page(rows, page, total: total) { row in
                Favorite(quote: try Quote(row: row), favoritedAt: try row.decode("favorited_at"))
            }
        }
    }

    /// Every favorite's quote id, newest first: one index-only query whatever the library's size.
    public func ids(userID: UUID) async throws -> [UUID] {
        try await pool.read(
            """
            SELECT quote_id FROM user_favorites f WHERE \(RowOwner.favorites.owned("f", by: userID))
            ORDER BY created_at DESC, quote_id DESC
            """
        ).map { try $0.decode("quote_id", as: UUID.self) }
    }

    /// Makes `quoteID` a favorite. Returns true when it became one, false when it already was.
    /// - Throws: `QuoteVaultError.notFound` for an unknown quote.
    public func add(userID: UUID, quoteID: UUID) async throws -> Bool {
        try await pool.run(Self.add(userID: userID, quoteID: quoteID))
    }

    public static func add(userID: UUID, quoteID: UUID) -> PGOperation<Bool> {
        .statement(
            """
            INSERT INTO user_favorites (user_id, quote_id) VALUES (\(userID), \(quoteID))
            ON CONFLICT (user_id, quote_id) DO NOTHING
            """
        ) { run in
            do { return try run().affectedRows == 1 } catch let error as PGError
                where error.sqlState == .foreignKeyViolation
            { throw QuoteVaultError.notFound }
        }
    }

    /// Removes the favorite if it exists (idempotent).
    public func remove(userID: UUID, quoteID: UUID) async throws {
        try await pool.run(Self.remove(userID: userID, quoteID: quoteID))
    }

    public static func remove(userID: UUID, quoteID: UUID) -> PGOperation<Void> {
        .statement(
            """
            DELETE FROM user_favorites f WHERE \(RowOwner.favorites.owned("f", by: userID)) AND quote_id = \(quoteID)
            """
        ) { _ = try $0() }
    }
}
