import Foundation
import PGClient

/// Reading quotes: newest-first pages (offset or keyset cursor), one quote, the category counts.
public struct QuoteService: Sendable {
    private let pool: PGPool
    private let cursors: QuoteCursor.Codec

    public init(pool: PGPool, cursorSecret: [UInt8]) {
        self.pool = pool
        self.cursors = QuoteCursor.Codec(secret: cursorSecret)
    }

    /// A page of quotes, newest first (`created_at` desc, then `id` desc), optionally of one category.
    /// A cursor page costs the same at any depth: it seeks the index to the position the cursor encodes.
    public func list(category: QuoteCategory?, page request: PageRequest) async throws -> Page<Quote> {
        let after = try request.cursor.map(cursors.decode)
        // The total rides along as an init-plan (evaluated once), so a page costs one round trip.
        var query: PGQuery =
            "SELECT \(unsafeSQL: Quote.columns()), \(Self.totalQuery(category)) AS total FROM quotes WHERE true"
        if let category { query.append(" AND quotes.category = \(category.rawValue)") }
        if let after {
            query.append(
                """
                 AND (quotes.created_at, quotes.id) < \
                (\(after.createdAt), \(after.id))
                """)
        }
        if after == nil && request.offset > 0 {
            // An offset page seeks to its first row, found by skipping `offset` entries of the index alone (an
            // index-only scan): OFFSET on the page's own scan read every skipped row from the table (figures in
            // bench/README.md). Past the end the seek finds no row, and the page none.
            var seek: PGQuery =
                " AND (quotes.created_at, quotes.id) <= (SELECT skipped.created_at, skipped.id FROM quotes AS skipped"
            if let category { seek.append(" WHERE skipped.category = \(category.rawValue)") }
            seek.append(" ORDER BY skipped.created_at DESC, skipped.id DESC OFFSET \(request.offset) LIMIT 1)")
            query.append(seek)
        }
        query.append(" ORDER BY quotes.created_at DESC, quotes.id DESC LIMIT \(request.size + 1)")
        if after == nil && request.offset == 0 { query.append(" OFFSET 0") }
        // The same index scan for every page whatever its values: one generic plan, not one per request.
        let rows = try await pool.read(query, plan: .generic)
        let total: Int
        if let first = rows.first {
            total = try first.decode("total", as: Int.self)
        } else {
            // A page past the end has no row to carry the total.
            total =
                try await pool.read("SELECT \(Self.totalQuery(category)) AS total").first?.decode("total", as: Int.self)
                ?? 0
        }
        let hasMore = rows.count > request.size
        let pageRows = rows.prefix(request.size)
        let nextCursor =
            try hasMore
            ? pageRows.last.map { row in
                // To the microsecond (a Date would round it), so the next page starts right after this row.
                cursors.encode(
                    QuoteCursor(createdAt: try row.decode("quote_created_at"), id: try row.decode("quote_id")))
            } : nil
        return try Page(rows, request, total: total, nextCursor: nextCursor, item: Quote.init(row:))
    }

    /// A number that changes whenever quotes change (any insert, update, delete or truncate, by anyone:
    /// `quotes_version`, kept by triggers). An answer made from quotes at one version holds while it is unchanged.
    public func version() async throws -> Int64 {
        let rows = try await pool.read("SELECT version FROM quotes_version", plan: .generic)
        return try rows.first?.decode("version", as: Int64.self) ?? 0
    }

    /// One quote; `QuoteVaultError.notFound` when there is none with this id.
    public func quote(id: UUID) async throws -> Quote {
        let rows = try await pool.read("SELECT \(unsafeSQL: Quote.columns()) FROM quotes WHERE id = \(id)")
        guard let row = rows.first else { throw QuoteVaultError.notFound }
        return try Quote(row: row)
    }

    /// The number of quotes per category, every category included.
    public func categoryCounts() async throws -> [(category: QuoteCategory, count: Int)] {
        let rows = try await pool.read("SELECT category, count FROM quote_counts")
        var counts: [String: Int] = [:]
        for row in rows { counts[try row.decode("category")] = try row.decode("count", as: Int.self) }
        return QuoteCategory.allCases.map { ($0, counts[$0.rawValue] ?? 0) }
    }

    /// The exact total, from the trigger-maintained count table (one primary-key read per category).
    static func totalQuery(_ category: QuoteCategory?) -> PGQuery {
        if let category {
            return "(SELECT count FROM quote_counts WHERE category = \(category.rawValue))"
        }
        return "(SELECT coalesce(sum(count), 0)::int8 FROM quote_counts)"
    }
}
