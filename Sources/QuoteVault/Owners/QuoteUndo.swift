import Foundation
import PGClient

/// Undo from the audit log: a quote edit goes back to its values before, a deleted quote comes back with its id.
/// Only while nothing touched the quote since that row (no later audit row about it, its text as the row left it,
/// and for console edits the row version the edit left); the undo is itself audited, naming the row it undoes.
public struct QuoteUndo: Sendable {
    /// Console edits and deletions, service role writes through `/rest/v1`, and an undo that restored values.
    public static let undoableActions: Set<String> = [
        "quote.edit", "quote.delete", "quote.undo", "rest.quotes.update", "rest.quotes.delete",
    ]

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// What undoing audit row `entryID` would do now, read and checked as the undo checks it; nothing changes.
    /// - Throws: as `undo` does when the undo would be refused (with the same reason), but a clash of text and
    ///   author with another quote, which only the undo itself finds.
    public func preview(_ entryID: Int64) async throws -> QuoteUndoPreview {
        try await pool.withConnection { connection in
            let entry = try Self.entry(entryID, lock: false, connection)
            let current = try Self.checked(entry, lock: false, connection)
            let restored = try QuoteEditor.validated(entry.before.record)
            return QuoteUndoPreview(
                entryID: entry.id, action: entry.action, quoteID: entry.quoteID,
                restored: .init(text: restored.text, author: restored.author, category: restored.category),
                current: current.map {
                    .init(text: $0.quote.text, author: $0.quote.author, category: $0.quote.category)
                })
        }
    }

    /// Reverses audit row `entryID`.
    /// - Returns: the id of the quote restored.
    /// - Throws: `Failure.notFound` for no such row; `Failure.conflict` saying why when the row cannot be undone
    ///   (not a quote edit or deletion, undone already, the quote changed since, frozen by a quote of the day,
    ///   its id taken, or another quote now has its text and author). Nothing is changed then.
    public func undo(_ entryID: Int64, by actor: AuditActor) async throws -> UUID {
        do {
            return try await pool.withTransaction { connection in
                let entry = try Self.entry(entryID, lock: true, connection)
                // The quote locked first: no writer slips in between the checks and the undo.
                try connection.query("SELECT 1 FROM quotes WHERE id = \(entry.quoteID) FOR UPDATE")
                if let current = try Self.checked(entry, lock: true, connection) {
                    try Self.revert(entry, from: current, by: actor, connection)
                } else {
                    try Self.reinsert(entry, by: actor, connection)
                }
                return entry.quoteID
            }
        } catch let error as PGError where error.sqlState == .uniqueViolation {
            throw Failure.conflict(
                "Another quote now has this text and author, or this row was undone meanwhile; nothing was undone.")
        }
    }

    /// The row to undo; locked for an undo, so two owners' undos of it queue (the second finds it undone).
    private static func entry(_ id: Int64, lock: Bool, _ connection: PGConnection) throws -> UndoableEntry {
        guard
            let row = try connection.query(
                """
                SELECT id, action, target, before::text AS before, after::text AS after, version,
                       EXISTS (SELECT 1 FROM console_audit undo WHERE undo.undoes = console_audit.id) AS undone
                FROM console_audit WHERE id = \(id) \(unsafeSQL: lock ? "FOR UPDATE" : "")
                """
            ).first
        else { throw Failure.notFound }
        guard try !row.decode("undone", as: Bool.self) else {
            throw Failure.conflict("Audit row #\(id) has been undone already; nothing was changed.")
        }
        let action: String = try row.decode("action")
        let before: String? = try row.decode("before")
        guard Self.undoableActions.contains(action), let before,
            let quoteID = UUID(uuidString: try row.decode("target"))
        else {
            throw Failure.conflict("Audit row #\(id) (\(action)) is not a quote edit or deletion; it cannot be undone.")
        }
        return UndoableEntry(
            id: id, action: action, quoteID: quoteID, before: try AuditedQuoteFields(json: before),
            after: try (row.decode("after", as: String?.self)).map(AuditedQuoteFields.init(json:)),
            version: try row.decode("version"))
    }

    /// Every refusal of an undo of `entry` as things stand (but a clash with another quote's text and author).
    /// - Returns: the quote as the edit left it; nil for a deletion, whose quote is gone and its id free.
    private static func checked(_ entry: UndoableEntry, lock: Bool, _ connection: PGConnection) throws
        -> EditableQuote?
    {
        try refuseLaterChanges(after: entry, connection)
        guard let after = entry.after else {
            guard try connection.query("SELECT 1 FROM quotes WHERE id = \(entry.quoteID)").isEmpty else {
                throw Failure.conflict(
                    "A quote with the id of audit row #\(entry.id) exists again; nothing was undone.")
            }
            return nil
        }
        guard let current = try EditableQuote.load(entry.quoteID, lock: lock, connection) else {
            throw Failure.conflict("The quote of audit row #\(entry.id) no longer exists; nothing was undone.")
        }
        if let reason = current.frozenReason { throw Failure.conflict(reason) }
        let now = AuditedQuoteFields(current.quote)
        guard now == after, entry.version == nil || entry.version == current.version else {
            throw Failure.conflict(
                "The quote changed after audit row #\(entry.id) (now “\(now.text)” — \(now.author), \(now.category)); "
                    + "nothing was undone.")
        }
        return current
    }

    /// Refuses when a later audit row is about the same quote: undo that one first.
    private static func refuseLaterChanges(after entry: UndoableEntry, _ connection: PGConnection) throws {
        if let later = try connection.query(
            """
            SELECT id, action FROM console_audit
            WHERE target = \(entry.quoteID.uuidString.lowercased()) AND id > \(entry.id)
              AND (action LIKE 'quote.%' OR action LIKE 'rest.quotes.%')
            ORDER BY id DESC LIMIT 1
            """
        ).first {
            let id: Int64 = try later.decode("id")
            let action: String = try later.decode("action")
            throw Failure.conflict(
                "The quote changed after audit row #\(entry.id): row #\(id) (\(action)) is later. Undo the latest "
                    + "change first; nothing was undone.")
        }
    }

    /// An edit: the quote's values before (`checked` found it as the edit left it).
    private static func revert(
        _ entry: UndoableEntry, from current: EditableQuote, by actor: AuditActor, _ connection: PGConnection
    ) throws {
        let restored = try QuoteEditor.validated(entry.before.record)
        let row = try connection.query(
            """
            UPDATE quotes SET text = \(restored.text), author = \(restored.author), category = \(restored.category)
            WHERE id = \(entry.quoteID) RETURNING \(unsafeSQL: Quote.columns()), xmin::text AS version
            """)[0]
        try AuditLog.record(
            actor, action: "quote.undo", target: entry.quoteID.uuidString.lowercased(),
            before: QuoteEditor.fields(current.quote), after: QuoteEditor.fields(try Quote(row: row)),
            version: try row.decode("version"), undoes: entry.id, connection)
    }

    /// A deletion: the quote again, with its id and creation time, if the id is free.
    private static func reinsert(_ entry: UndoableEntry, by actor: AuditActor, _ connection: PGConnection) throws {
        let restored = try QuoteEditor.validated(entry.before.record)
        guard
            let row = try connection.query(
                """
                INSERT INTO quotes (id, text, author, category, created_at)
                VALUES (\(entry.quoteID), \(restored.text), \(restored.author), \(restored.category),
                        coalesce(\(entry.before.createdAt)::timestamptz, now()))
                ON CONFLICT (id) DO NOTHING
                RETURNING \(unsafeSQL: Quote.columns()), xmin::text AS version
                """
            ).first
        else {
            throw Failure.conflict(
                "A quote with the id of audit row #\(entry.id) exists again; nothing was undone.")
        }
        try AuditLog.record(
            actor, action: "quote.undo", target: entry.quoteID.uuidString.lowercased(),
            after: QuoteEditor.fields(try Quote(row: row)), version: try row.decode("version"), undoes: entry.id,
            connection)
    }
}

/// An audit row that may be undone, its values parsed.
private struct UndoableEntry {
    let id: Int64
    let action: String
    let quoteID: UUID
    let before: AuditedQuoteFields
    /// Nil for a deletion.
    let after: AuditedQuoteFields?
    /// The row version the change left (console changes since migration 0073).
    let version: String?
}
