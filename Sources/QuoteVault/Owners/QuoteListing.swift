import Foundation
import PGClient

/// The console's quote list in any order: by a column or by how many users favorited each quote (read from
/// `quote_favorite_counts`, which triggers keep, as they keep the text and author orders' `quote_list_keys`),
/// filtered by category; a page at a time, or all of it for an export, read in keyset pages. Each order has an
/// index (migrations 0071, 0072, 0083), so any page costs about the same.
public struct QuoteListing: Sendable {
    /// What the list can be ordered by; the SQL of each is a constant (no input reaches it).
    public enum Sort: String, Sendable, CaseIterable {
        case added, text, author, category, favorites

        /// The table the order is read from (an index of it covers the terms and the category, so a deep page's
        /// first row is found index-only) and its quote id.
        fileprivate var table: (name: String, id: String) {
            switch self {
            case .added: ("quotes", "id")
            case .text, .author: ("quote_list_keys", "quote_id")
            case .category, .favorites: ("quote_favorite_counts", "quote_id")
            }
        }

        /// The ORDER BY terms of that table (aliased `s`), all in one direction, so one index serves both.
        fileprivate var terms: [String] {
            switch self {
            case .added: ["s.created_at", "s.id"]
            // In lower case, kept apart from quotes: an index of quotes covering the column would be taken for the
            // app's filters on it (0072, 0083).
            case .text: ["s.text_key", "s.quote_id"]
            case .author: ["s.author_key", "s.quote_id"]
            case .category: ["s.category", "s.created_at", "s.quote_id"]
            case .favorites: ["s.favorites", "s.created_at", "s.quote_id"]
            }
        }

        /// The SQL type of each term, for a cursor's values (carried as text) to compare as the terms do.
        fileprivate var types: [String] {
            switch self {
            case .added: ["timestamptz", "uuid"]
            case .text, .author: ["text", "uuid"]
            case .category: ["text", "timestamptz", "uuid"]
            case .favorites: ["integer", "timestamptz", "uuid"]
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

        fileprivate var orderBy: String {
            sort.terms.map { $0 + (descending ? " DESC" : " ASC") }.joined(separator: ", ")
        }

        /// The page's rows are the ones from its first row on, in this order.
        fileprivate var fromFirst: String {
            "(" + sort.terms.joined(separator: ", ") + (descending ? ") <= " : ") >= ")
        }

        /// The rows strictly after a row with the keys that follow, in this order.
        fileprivate var after: String {
            "(" + sort.terms.joined(separator: ", ") + (descending ? ") < " : ") > ")
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

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The page (1-based) of `size` rows, with the filter's total (from the maintained category counts). A page in
    /// the second half is sought from the end, in the reverse order, so no page skips more than half the rows.
    public func page(category: QuoteCategory?, order: Order, page: Int, size: Int) async throws
        -> (rows: [Row], total: Int)
    {
        let total =
            try await pool.query("SELECT \(QuoteService.totalQuery(category)) AS total")
            .first?.decode("total", as: Int.self) ?? 0
        let offset = (page - 1) * size
        guard offset * 2 > total else {
            let rows = try await pool.query(Self.query(category: category, order: order, offset: offset, limit: size))
            return (try rows.map(Self.row), total)
        }
        let count = min(size, total - offset)
        guard count > 0 else { return ([], total) }
        let reversed = Order(order.sort, descending: !order.descending)
        let rows = try await pool.query(
            Self.query(category: category, order: reversed, offset: total - offset - count, limit: count))
        return (try rows.map(Self.row).reversed(), total)
    }

    /// Where an export stopped: the order's keys of the last row it read, as text.
    public struct Cursor: Sendable, Equatable {
        fileprivate let keys: [String]
    }

    /// The next `limit` rows of the filter after `cursor` (from the first with none), for an export that reads the
    /// whole filter a page at a time: each page is sought by the order's index, however deep. Rows written while
    /// an export runs may be in it or not (it is no snapshot), but a row that stays put is in it exactly once.
    /// - Returns: the rows and the cursor after them; nil when the filter has no more.
    public func export(category: QuoteCategory?, order: Order, after cursor: Cursor?, limit: Int) async throws
        -> (rows: [Row], next: Cursor?)
    {
        let table = order.sort.table
        var query: PGQuery = "SELECT * FROM \(unsafeSQL: table.name) s WHERE true"
        if let category { query.append(" AND s.category = \(category.rawValue)") }
        if let cursor {
            query.append(" AND \(unsafeSQL: order.after)(")
            for (index, (key, type)) in zip(cursor.keys, order.sort.types).enumerated() {
                query.append("\(unsafeSQL: index == 0 ? "" : ", ")\(key)::\(unsafeSQL: type)")
            }
            query.append(")")
        }
        query.append(" ORDER BY \(unsafeSQL: order.orderBy) LIMIT \(limit)")
        let keys = order.sort.terms.enumerated().map { "(\($1))::text AS key\($0)" }.joined(separator: ", ")
        let rows = try await pool.query(Self.joined(query, order: order, extra: ", " + keys))
        let next = try rows.last.map { last in
            Cursor(keys: try order.sort.terms.indices.map { try last.decode("key\($0)", as: String.self) })
        }
        return (try rows.map(Self.row), rows.count < limit ? nil : next)
    }

    /// A deep page does not read the rows before it: its first row is found by an index-only scan of the order's
    /// index (`OFFSET` there), then the page's rows are read from it on, and only they are joined.
    private static func query(category: QuoteCategory?, order: Order, offset: Int, limit: Int) -> PGQuery {
        let table = order.sort.table
        var filter: PGQuery = ""
        if let category { filter.append(" AND s.category = \(category.rawValue)") }
        var query: PGQuery = "SELECT * FROM \(unsafeSQL: table.name) s WHERE true"
        query.append(filter)
        if offset > 0 {
            query.append(
                " AND \(unsafeSQL: order.fromFirst)(SELECT \(unsafeSQL: order.sort.terms.joined(separator: ", "))")
            query.append(" FROM \(unsafeSQL: table.name) s WHERE true")
            query.append(filter)
            query.append(" ORDER BY \(unsafeSQL: order.orderBy) OFFSET \(offset) LIMIT 1)")
        }
        query.append(" ORDER BY \(unsafeSQL: order.orderBy) LIMIT \(limit)")
        return joined(query, order: order)
    }

    /// The quotes and favorites counts of the rows `inner` selects from the order's table, in the order.
    private static func joined(_ inner: PGQuery, order: Order, extra: String = "") -> PGQuery {
        var query: PGQuery = """
            SELECT \(unsafeSQL: Quote.columns("q")), coalesce(c.favorites, 0)::int8 AS favorites\(unsafeSQL: extra)
            FROM (
            """
        query.append(inner)
        query.append(
            """
            ) s
            JOIN quotes q ON q.id = s.\(unsafeSQL: order.sort.table.id)
            LEFT JOIN quote_favorite_counts c ON c.quote_id = q.id
            ORDER BY \(unsafeSQL: order.orderBy)
            """)
        return query
    }

    private static func row(_ row: PGRow) throws -> Row {
        Row(quote: try Quote(row: row), favorites: try row.decode("favorites"))
    }
}
