import Foundation
import PGClient

/// Who owns a row of each user table, stated once: `/v1`'s services, the sync feed, the account export, the
/// idempotency store and `/rest/v1`'s row rules (`RestSchema`) all take their ownership predicates from here.
public indirect enum RowOwner: Sendable {
    /// The user named by this column.
    case column(String)
    /// Whoever owns the `table` row (by its `id`) that `column` points at.
    case through(column: String, table: String, owner: RowOwner)

    public static let favorites = RowOwner.column("user_id")
    public static let collections = RowOwner.column("user_id")
    public static let collectionQuotes = RowOwner.through(
        column: "collection_id", table: "collections", owner: collections)
    public static let profiles = RowOwner.column("id")
    /// The sync feed's changes and positions, queued sync operations and stored `Idempotency-Key` answers.
    public static let syncChanges = RowOwner.column("user_id")
    public static let syncPositions = RowOwner.column("user_id")
    public static let syncOperations = RowOwner.column("user_id")
    public static let idempotencyKeys = RowOwner.column("user_id")

    /// The row `alias` (a table name or alias in the statement) belongs to `userID`.
    public func owned(_ alias: String, by userID: UUID) -> PGQuery {
        switch self {
        case .column(let column):
            return PGQuery(unsafeSQL: "\(alias).\"\(column)\" = ") + "\(userID)"
        case .through(let column, let table, let owner):
            return PGQuery(unsafeSQL: "EXISTS (SELECT 1 FROM \"\(table)\" o WHERE o.id = \(alias).\"\(column)\" AND ")
                + owner.owned("o", by: userID) + PGQuery(unsafeSQL: ")")
        }
    }
}
