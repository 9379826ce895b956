import Foundation
import PGClient

/// Who owns a row of each user table, stated once: `/v1`'s services and `/rest/v1`'s row rules both take their
/// ownership predicates from here. A table not listed is public (read by anyone, written by no user).
public enum RowOwner: Sendable {
    /// The user named by this column.
    case column(String)
    /// Whoever owns the `table` row (by its `id`) that `column` points at.
    case through(column: String, table: String)

    public static let favorites = RowOwner.column("user_id")
    public static let collections = RowOwner.column("user_id")
    public static let collectionQuotes = RowOwner.through(column: "collection_id", table: "collections")
    public static let profiles = RowOwner.column("id")

    public static let tables: [String: RowOwner] = [
        "user_favorites": favorites, "collections": collections, "collection_quotes": collectionQuotes,
        "profiles": profiles,
    ]

    /// The row `alias` (a table name or alias in the statement) belongs to `userID`.
    public func owned(_ alias: String, by userID: UUID) -> PGQuery {
        switch self {
        case .column(let column):
            return PGQuery(unsafeSQL: "\(alias).\"\(column)\" = ") + "\(userID)"
        case .through(let column, let table):
            guard let owner = Self.tables[table] else { preconditionFailure("\(table) has no owner") }
            var exists = PGQuery(unsafeSQL: "EXISTS (SELECT 1 FROM \"\(table)\" o WHERE o.id = \(alias).\"\(column)\" AND ")
            exists.append(owner.owned("o", by: userID))
            exists.append(PGQuery(unsafeSQL: ")"))
            return exists
        }
    }
}
