import Foundation
import PGClient

/// Importing a quotes file from the console in two steps: `create` checks every row (the import's rules) and keeps
/// the verdicts, saving no quote; `confirm` then saves the good rows in batches, each batch in one transaction
/// with its audit row and the progress the page shows.
public struct QuoteImportDrafts: Sendable {
    /// The most rows one file may have.
    public static let maximumRows = 50_000
    /// Rows saved per transaction: small, so the progress page moves and an interrupted import loses little.
    public static let batchSize = 500

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Checks each record and keeps the file's rows with their verdicts. - Returns: the draft's id.
    public func create(fileName: String, records: [QuoteRecord], by actor: AuditActor) async throws -> UUID {
        guard records.count <= Self.maximumRows else {
            throw Failure.invalid("file", "has \(records.count) rows; at most \(Self.maximumRows) at once")
        }
        let rows = records.map(Self.verdict)
        let json = try PGJSON(encoding: rows).text
        let valid = rows.filter { $0.error == nil }.count
        return try await pool.withTransaction { connection in
            let id = try connection.query(
                """
                INSERT INTO console_imports (owner_id, file_name, rows, total, valid)
                VALUES (\(actor.ownerID), \(fileName), \(json)::jsonb, \(rows.count), \(valid)) RETURNING id
                """)[0].decode("id", as: UUID.self)
            try AuditLog.record(
                actor, action: "import.upload", target: id.uuidString.lowercased(),
                after: [
                    "file": fileName, "rows": String(rows.count), "valid": String(valid),
                ], connection)
            return id
        }
    }

    public func draft(_ id: UUID) async throws -> ImportDraft {
        guard
            let row = try await pool.query(
                """
                SELECT \(unsafeSQL: ImportDraft.columns) FROM console_imports WHERE id = \(id)
                """
            ).first
        else { throw Failure.notFound }
        return try ImportDraft(row: row)
    }

    /// Rows of the file in order (only the refused ones when `onlyErrors`), `limit` from `offset`.
    public func rows(_ id: UUID, onlyErrors: Bool, offset: Int, limit: Int) async throws -> [ImportDraft.Row] {
        try await pool.query(
            """
            SELECT (r->>'line')::int4 AS line, r->>'text' AS text, r->>'author' AS author,
                   r->>'category' AS category, r->>'error' AS error
            FROM console_imports, jsonb_array_elements(rows) WITH ORDINALITY AS e (r, position)
            WHERE id = \(id) AND (NOT \(onlyErrors) OR r->>'error' IS NOT NULL)
            ORDER BY position OFFSET \(offset) LIMIT \(limit)
            """
        ).map { row in
            ImportDraft.Row(
                line: try row.decode("line"), text: try row.decode("text"), author: try row.decode("author"),
                category: try row.decode("category"), error: try row.decode("error"))
        }
    }

    /// Marks a previewed draft as importing. - Returns: false when it was confirmed already (or is unknown).
    public func confirm(_ id: UUID) async throws -> Bool {
        try await pool.query(
            """
            UPDATE console_imports SET state = 'importing', updated_at = now() WHERE id = \(id) AND state = 'preview'
            """
        ).affectedRows == 1
    }

    /// Claims a stalled import (see `ImportDraft.isStalled`) to run it on from its last saved batch.
    /// - Returns: false when it is not stalled (still running, or finished).
    public func resume(_ id: UUID) async throws -> Bool {
        try await pool.query(
            """
            UPDATE console_imports SET updated_at = now()
            WHERE id = \(id) AND state = 'importing' AND updated_at < now() - interval '1 minute'
            """
        ).affectedRows == 1
    }

    /// Saves the good rows of a confirmed draft, batch by batch; a batch's quotes and the progress commit together,
    /// the last batch with the import's audit row (a failed import gets one saying where it stopped). A quote already there (same text and author) is skipped, as `quote-server import` does.
    public func run(_ id: UUID, by actor: AuditActor) async throws {
        do {
            while try await pool.withTransaction({ connection in try Self.saveBatch(id, actor, connection) }) {}
        } catch {
            _ = try? await pool.withTransaction { connection in
                let processed = try connection.query(
                    """
                    UPDATE console_imports SET state = 'failed', updated_at = now() WHERE id = \(id)
                    RETURNING processed, inserted
                    """
                ).first
                try AuditLog.record(
                    actor, action: "quote.import_failed", target: id.uuidString.lowercased(),
                    after: [
                        "processed": String(try processed?.decode("processed", as: Int.self) ?? 0),
                        "inserted": String(try processed?.decode("inserted", as: Int.self) ?? 0),
                    ], connection)
            }
            throw error
        }
    }

    /// Saves the next batch. - Returns: whether rows remain.
    private static func saveBatch(_ id: UUID, _ actor: AuditActor, _ connection: PGConnection) throws -> Bool {
        // Gone when its owner was removed meanwhile (the draft goes with them).
        guard
            let found = try connection.query(
                """
                SELECT \(unsafeSQL: ImportDraft.columns) FROM console_imports WHERE id = \(id) FOR UPDATE
                """
            ).first
        else { return false }
        let draft = try ImportDraft(row: found)
        guard draft.state == .importing else { return false }
        let rows = try connection.query(
            """
            WITH batch AS (
                SELECT r->>'text' AS text, r->>'author' AS author, r->>'category' AS category, position
                FROM console_imports, jsonb_array_elements(rows) WITH ORDINALITY AS e (r, position)
                WHERE id = \(id) AND r->>'error' IS NULL
                ORDER BY position OFFSET \(draft.processed) LIMIT \(batchSize)
            ), saved AS (
                INSERT INTO quotes (text, author, category, created_at)
                SELECT text, author, category, now() - position * interval '1 microsecond' FROM batch
                ON CONFLICT DO NOTHING RETURNING 1
            )
            SELECT (SELECT count(*) FROM batch)::int8 AS taken, (SELECT count(*) FROM saved)::int8 AS inserted
            """)[0]
        let taken = try rows.decode("taken", as: Int.self), inserted = try rows.decode("inserted", as: Int.self)
        let processed = draft.processed + taken
        let finished = processed >= draft.valid
        try connection.query(
            """
            UPDATE console_imports
            SET processed = \(processed), inserted = inserted + \(inserted),
                duplicates = duplicates + \(taken - inserted),
                state = CASE WHEN \(finished) THEN 'done' ELSE state END, updated_at = now()
            WHERE id = \(id)
            """)
        // One audit row per import, written with its last batch.
        if finished {
            try AuditLog.record(
                actor, action: "quote.import", target: id.uuidString.lowercased(),
                after: [
                    "file": draft.fileName, "rows": "\(draft.valid) good rows of \(draft.total)",
                    "inserted": String(draft.inserted + inserted),
                    "already_present": String(draft.duplicates + taken - inserted),
                ], connection)
        }
        return !finished
    }

    /// A record's verdict by the import's rules, with the normalised values of a good row.
    static func verdict(_ record: QuoteRecord) -> ImportDraft.Row {
        switch QuoteImporter.validate(record) {
        case .success(let quote):
            return ImportDraft.Row(
                line: record.line, text: quote.text, author: quote.author,
                category: quote.category.rawValue, error: nil)
        case .failure(let rejection):
            return ImportDraft.Row(
                line: record.line, text: record.text ?? "", author: record.author ?? "",
                category: record.category ?? "", error: rejection.reason)
        }
    }
}
