import Foundation
import PGClient

/// The console's quote list in any order: by a column or by how many users favorited each quote (read from
/// `quote_favorite_counts`, which a trigger keeps), filtered by category; a page at a time, or all of it for an
/// export, up to `exportLimit`.
public struct QuoteListing: Sendable {
    /// What the list can be ordered by; the SQL of each is a constant (no input reaches it).
    public enum Sort: String, Sendable, CaseIterable {
        case added, text, author, category, favorites

        /// The ORDER BY terms before the direction is applied; ties fall to the newest, then the id.
        fileprivate var terms: [String] {
            switch self {
            case .added: ["q.created_at", "q.id"]
            case .text: ["q.text", "q.id"]
            case .author: ["q.author", "q.id"]
            case .category: ["q.category", "q.created_at", "q.id"]
            case .favorites: ["coalesce(c.favorites, 0)", "q.created_at", "q.id"]
            }
        }
    }

    /// A sort and its direction.
    public struct Order: Sendable, Equatable {
        public let sort: Sort
        public let descending: Bool

        public init(_ sort: Sort, descending: Bool) {
            self.sort = sort
            self.descending = descending
        }

        /// The list's default: newest first.
        public static let newest = Order(.added, descending: true)

        fileprivate var sql: String {
            sort.terms.map { $0 + (descending ? " DESC" : " ASC") }.joined(separator: ", ")
        }
    }

    /// A quote of the list with its favorites count.
    public struct Row: Sendable, Equatable {
        public let quote: Quote
        public let favorites: Int

        public init(quote: Quote, favorites: Int) {
            self.quote = quote
            self.favorites = favorites
        }
    }

    /// The most rows an export holds (the first ones in the chosen order).
    public static let exportLimit = 100_000

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The page (1-based) of `size` rows, with the filter's total (from the maintained category counts).
    public func page(category: QuoteCategory?, order: Order, page: Int, size: Int) async throws
        -> (rows: [Row], total: Int)
    {
        var query = Self.query(category: category, order: order)
        query.append(" LIMIT \(size) OFFSET \(max(0, page - 1) * size)")
        let rows = try await pool.query(query).map(Self.row)
        let total =
            try await pool.query("SELECT \(QuoteService.totalQuery(category)) AS total")
            .first?.decode("total", as: Int.self) ?? 0
        return (rows, total)
    }

    /// The filter's rows in order, at most `exportLimit`.
    public func export(category: QuoteCategory?, order: Order) async throws -> [Row] {
        var query = Self.query(category: category, order: order)
        query.append(" LIMIT \(Self.exportLimit)")
        return try await pool.query(query).map(Self.row)
    }

    private static func query(category: QuoteCategory?, order: Order) -> PGQuery {
        var query: PGQuery = """
            SELECT \(unsafeSQL: Quote.columns("q")), coalesce(c.favorites, 0)::int8 AS favorites
            FROM quotes q LEFT JOIN quote_favorite_counts c ON c.quote_id = q.id WHERE true
            """
        if let category { query.append(" AND q.category = \(category.rawValue)") }
        query.append(" ORDER BY \(unsafeSQL: order.sql)")
        return query
    }

    private static func row(_ row: PGRow) throws -> Row {
        Row(quote: try Quote(row: row), favorites: try row.decode("favorites"))
    }
}
