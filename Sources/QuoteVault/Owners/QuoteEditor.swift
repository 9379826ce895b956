import Foundation
import PGClient

/// The console's changes to quotes: add, edit, delete, each validated as an import row is and audited in the
/// transaction of the change (with the values before and after).
public struct QuoteEditor: Sendable {
    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// - Throws: `Failure.validation` (nothing saved) for an empty or too long text or author, an unknown
    ///   category, or a text and author that another quote already has.
    public func add(_ record: QuoteRecord, by actor: AuditActor) async throws -> Quote {
        let quote = try Self.validated(record)
        return try await Self.refusingDuplicates {
            try await pool.withTransaction { connection in
                let row = try connection.query(
                    """
                    INSERT INTO quotes (text, author, category)
                    VALUES (\(quote.text), \(quote.author), \(quote.category))
                    RETURNING \(unsafeSQL: Quote.columns())
                    """)[0]
                let saved = try Quote(row: row)
                try AuditLog.record(
                    actor, action: "quote.add", target: saved.id.uuidString.lowercased(),
                    after: Self.fields(saved), connection)
                return saved
            }
        }
    }

    /// - Throws: as `add`, `Failure.notFound` when there is no such quote, `Failure.conflict` for a quote that
    ///   has been a quote of the day (it stays as it was shown, as on `/rest/v1`).
    public func edit(_ id: UUID, _ record: QuoteRecord, by actor: AuditActor) async throws -> Quote {
        let quote = try Self.validated(record)
        return try await Self.refusingDuplicates {
            try await pool.withTransaction { connection in
                guard
                    let old = try connection.query(
                        """
                        SELECT \(unsafeSQL: Quote.columns()) FROM quotes WHERE id = \(id) FOR UPDATE
                        """
                    ).first.map(Quote.init(row:))
                else { throw Failure.notFound }
                guard
                    try connection.query("SELECT 1 AS shown FROM quote_of_day WHERE quote_id = \(id) LIMIT 1")
                        .isEmpty
                else { throw Failure.conflict(Self.frozen) }
                let row = try connection.query(
                    """
                    UPDATE quotes SET text = \(quote.text), author = \(quote.author), category = \(quote.category)
                    WHERE id = \(id) RETURNING \(unsafeSQL: Quote.columns())
                    """)[0]
                let saved = try Quote(row: row)
                try AuditLog.record(
                    actor, action: "quote.edit", target: id.uuidString.lowercased(),
                    before: Self.fields(old), after: Self.fields(saved), connection)
                return saved
            }
        }
    }

    /// - Throws: `Failure.notFound`; `Failure.conflict` for a quote that was a day's quote of the day (that
    ///   history is frozen).
    public func delete(_ id: UUID, by actor: AuditActor) async throws {
        do {
            try await pool.withTransaction { connection in
                guard
                    let old = try connection.query(
                        """
                        DELETE FROM quotes WHERE id = \(id) RETURNING \(unsafeSQL: Quote.columns())
                        """
                    ).first.map(Quote.init(row:))
                else { throw Failure.notFound }
                try AuditLog.record(
                    actor, action: "quote.delete", target: id.uuidString.lowercased(),
                    before: Self.fields(old), connection)
            }
        } catch let error as PGError where error.sqlState == .foreignKeyViolation {
            throw Failure.conflict(Self.frozen)
        }
    }

    static let frozen =
        "This quote has been a quote of the day, which stays as it was shown: it cannot be changed "
        + "or deleted. Add a new quote instead."

    /// The audit log's view of a quote.
    static func fields(_ quote: Quote) -> [String: String] {
        ["text": quote.text, "author": quote.author, "category": quote.category]
    }

    /// The import's rules (`QuoteImporter.validate`), with the refusal named by its field.
    static func validated(_ record: QuoteRecord) throws -> (text: String, author: String, category: String) {
        switch QuoteImporter.validate(record) {
        case .success(let quote): return (quote.text, quote.author, quote.category.rawValue)
        case .failure(let rejection):
            let field = ["text", "author", "category"].first { rejection.reason.hasPrefix($0) } ?? "text"
            throw Failure.invalid(field, rejection.reason)
        }
    }

    private static func refusingDuplicates<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PGError where error.sqlState == .uniqueViolation {
            throw Failure.invalid("text", "another quote already has this text and author")
        }
    }
}
