import Foundation
import PGClient

/// What a search matches: the quote's text or its author.
public enum SearchField: String, Sendable {
    case keyword, author

    var column: String { self == .keyword ? "text" : "author" }
}

/// Literal, case-insensitive substring search over text or author.
///
/// Every result contains the query (`ILIKE` with `%`, `_` and `\` escaped, so they match themselves),
/// served by the trigram GIN indexes. Ranking: the query as a whole word first, then as the start of a
/// word, then anywhere; ties newest first.
public struct QuoteSearch: Sendable {
    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public static let maximumQueryLength = 200

    /// Validates and normalises the query: trimmed, 1…200 characters.
    public static func normalise(_ query: String?) throws -> String {
        // Unicode's White_Space, the same set as Foundation's `.whitespacesAndNewlines`, whose trimming cost a
        // search ~10 µs on Linux.
        let scalars = (query ?? "").unicodeScalars
        let start = scalars.firstIndex { !$0.properties.isWhitespace } ?? scalars.endIndex
        let end = scalars[start...].lastIndex { !$0.properties.isWhitespace }.map(scalars.index(after:)) ?? start
        let trimmed = String(scalars[start..<end])
        guard !trimmed.isEmpty else { throw QuoteVaultError.invalid("q", "must not be empty") }
        guard trimmed.unicodeScalars.count <= maximumQueryLength else {  // code points, as JSON Schema counts
            throw QuoteVaultError.invalid("q", "must be at most \(maximumQueryLength) characters")
        }
        return trimmed
    }

    public func search(_ rawQuery: String?, in field: SearchField, category: QuoteCategory?, page: PageRequest) async throws
        -> Page<Quote>
    {
        let query = try Self.normalise(rawQuery)
        let pattern = "%" + Self.escapeLike(query) + "%"
        let word = Self.escapeRegex(query)
        // A word boundary that also works next to punctuation: not preceded/followed by a word character
        // (letter, digit or _; \W is its complement).
        let wholeWord = "(^|\\W)" + word + "($|\\W)"
        let wordStart = "(^|\\W)" + word
        return try await pool.withConnection { connection in
            let column = field.column
            var sql: PGQuery = "SELECT \(unsafeSQL: Quote.columns()), count(*) OVER () AS total FROM quotes"
            sql.append(" WHERE quotes.\(unsafeSQL: column) ILIKE \(pattern)")
            if let category { sql.append(" AND quotes.category = \(category.rawValue)") }
            sql.append("""
                 ORDER BY CASE WHEN quotes.\(unsafeSQL: column) ~* \(wholeWord) THEN 0 \
                WHEN quotes.\(unsafeSQL: column) ~* \(wordStart) THEN 1 ELSE 2 END, \
                quotes.created_at DESC, quotes.id DESC LIMIT \(page.size + 1) OFFSET \(page.offset)
                """)
            let rows = try connection.query(sql)
            var total = try rows.first?.decode("total", as: Int.self) ?? 0
            if rows.isEmpty && page.offset > 0 {
                // Past the end there is no row to carry the window count: count separately.
                var count: PGQuery = "SELECT count(*)::int8 AS total FROM quotes WHERE quotes.\(unsafeSQL: column) ILIKE \(pattern)"
                if let category { count.append(" AND quotes.category = \(category.rawValue)") }
                total = try connection.query(count).first?.decode("total", as: Int.self) ?? 0
            }
            return Page(
                items: try rows.prefix(page.size).map(Quote.init(row:)), page: page.page, pageSize: page.size,
                total: total, hasMore: rows.count > page.size, nextCursor: nil)
        }
    }

    /// `%`, `_` and `\` match themselves in a LIKE pattern with the default escape character.
    static func escapeLike(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Every character that is not a letter, digit or space becomes a literal in a PostgreSQL regex.
    static func escapeRegex(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar == " " || isLetterMarkOrNumber(scalar) {
                escaped.unicodeScalars.append(scalar)
            } else {
                escaped.append("\\")
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Unicode categories L*, M* and N*: Foundation's `CharacterSet.alphanumerics`, without its per-call cost.
    private static func isLetterMarkOrNumber(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }
}
