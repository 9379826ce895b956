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

    /// The quote with its version and the days that hold it; nil when there is none.
    public func editable(_ id: UUID) async throws -> EditableQuote? {
        try await pool.withConnection { try EditableQuote.load(id, lock: false, $0) }
    }

    /// Saves `record` over the quote when it is still at `version` (the one the owner's form showed).
    /// - Throws: as `add`, `Failure.notFound` when there is no such quote, `Failure.conflict` for a quote that
    ///   has been a quote of the day or is pinned to a coming one (it stays as it was shown, as on `/rest/v1`),
    ///   `QuoteEditConflict` when another writer changed it since `version`.
    public func edit(_ id: UUID, _ record: QuoteRecord, version: String, by actor: AuditActor) async throws -> Quote {
        let quote = try Self.validated(record)
        return try await Self.refusingDuplicates {
            try await pool.withTransaction { connection in
                guard let old = try EditableQuote.load(id, lock: true, connection) else { throw Failure.notFound }
                if let reason = old.frozenReason { throw Failure.conflict(reason) }
                guard old.version == version else { throw QuoteEditConflict(current: old) }
                let row = try connection.query(
                    """
                    UPDATE quotes SET text = \(quote.text), author = \(quote.author), category = \(quote.category)
                    WHERE id = \(id) RETURNING \(unsafeSQL: Quote.columns()), xmin::text AS version
                    """)[0]
                let saved = try Quote(row: row)
                try AuditLog.record(
                    actor, action: "quote.edit", target: id.uuidString.lowercased(),
                    before: Self.fields(old.quote), after: Self.fields(saved), version: try row.decode("version"),
                    connection)
                return saved
            }
        }
    }

    /// Deletes the quote; a coming day that only its seed chose for it chooses again (migration 0069).
    /// - Throws: `Failure.notFound`; `Failure.conflict` for a quote that was a day's quote of the day (that
    ///   history is frozen) or is pinned to a coming day, saying which.
    public func delete(_ id: UUID, by actor: AuditActor) async throws {
        do {
            try await pool.withTransaction { connection in
                guard let old = try EditableQuote.load(id, lock: true, connection) else { throw Failure.notFound }
                if let reason = old.frozenReason { throw Failure.conflict(reason) }
                // `created_at` as JSON writes it (to the microsecond), so an undo puts the quote back in its place.
                let createdAt: String = try connection.query(
                    "DELETE FROM quotes WHERE id = \(id) RETURNING to_jsonb(created_at) #>> '{}' AS created_at"
                )[0].decode("created_at")
                try AuditLog.record(
                    actor, action: "quote.delete", target: id.uuidString.lowercased(),
                    before: Self.fields(old.quote).merging(["created_at": createdAt]) { $1 }, connection)
            }
        } catch let error as PGError where error.sqlState == .foreignKeyViolation {
            // A pin landed between the check and the deletion.
            throw Failure.conflict("A day was pinned to this quote meanwhile; nothing was deleted.")
        }
    }

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
