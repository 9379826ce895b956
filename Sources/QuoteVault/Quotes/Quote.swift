import Foundation
import PGClient

/// The five categories of the app.
public enum QuoteCategory: String, Sendable, CaseIterable, Codable {
    case motivation, love, success, wisdom, humor

    /// Parses a category given by a client; `field` names it in the validation error.
    public static func parse(_ text: String, field: String = "category") throws -> QuoteCategory {
        guard let category = QuoteCategory(rawValue: text) else {
            throw QuoteVaultError.invalid(field, "must be one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return category
    }
}

/// A quote as the API shows it: `{id, text, author, category, created_at}`.
public struct Quote: Sendable, Equatable {
    public let id: UUID
    public let text: String
    public let author: String
    public let category: String
    public let createdAt: Date

    /// The columns `init(row:)` reads, qualified by `alias` when the query joins.
    public static func columns(_ alias: String = "quotes") -> String {
        alias == "quotes" ? columnsOfQuotes : columnList(alias)
    }

    /// Built once: the hot routes use the default alias on every request.
    private static let columnsOfQuotes = columnList("quotes")

    private static func columnList(_ alias: String) -> String {
        "\(alias).id AS quote_id, \(alias).text AS quote_text, \(alias).author AS quote_author, "
            + "\(alias).category AS quote_category, \(alias).created_at AS quote_created_at"
    }

    /// Decodes the columns selected by `columns(_:)`.
    public init(row: PGRow) throws {
        id = try row.decode("quote_id")
        text = try row.decode("quote_text")
        author = try row.decode("quote_author")
        category = try row.decode("quote_category")
        createdAt = try row.decode("quote_created_at")
    }
}
