import PGClient

/// The rows phase of an import: batch after batch, each COPYed into a temporary table and inserted from there in
/// its own transaction, committed with the import's progress. When the upkeep is set aside (`bulk`, migration 0057)
/// the batches go in on every connection of the pool side by side, in the file's order where it matters
/// (`ImportBatchOrder`); otherwise on one.
extension QuoteImporter {
    /// Sends `valid[from...]`; `progress` is told the rows committed after each batch, in order, and stops the
    /// import by throwing (the batches committed stay; one waiting to commit rolls back).
    func insertBatches(
        _ valid: [ValidRow], key: String, from done: Int, bulk: Bool, report: inout ImportReport,
        progress: @Sendable (Int) throws -> Void
    ) async throws {
        let batchSize = self.batchSize
        let pool = self.pool
        let order = ImportBatchOrder(batches: (valid.count - done + batchSize - 1) / batchSize)
        let connections = bulk ? max(1, pool.stats.size) : 1
        // Each connection's rows inserted and already there, and the error that stopped it (one that only
        // waited for a stopped batch aside).
        typealias Outcome = (inserted: Int, duplicates: Int, error: (any Error)?)
        let outcomes = await withoutActuallyEscaping(progress) { progress in
            await withTaskGroup(of: Outcome.self) { group in
                for _ in 0..<connections {
                    group.addTask {
                        var outcome: Outcome = (0, 0, nil)
                        while let batch = order.take() {
                            let start = done + batch * batchSize
                            let rows = valid[start..<min(start + batchSize, valid.count)]
                            do {
                                let inserted = try await pool.withTransaction { connection in
                                    try Self.insert(
                                        rows, at: start, batch: batch, key: key, bulk: bulk, order: order,
                                        on: connection)
                                }
                                outcome.inserted += inserted
                                outcome.duplicates += rows.count - inserted
                                try progress(start + rows.count)
                                order.markCommitted(batch)
                            } catch {
                                if !(error is ImportBatchOrder.Stopped) { outcome.error = error }
                                order.stop()
                                break
                            }
                        }
                        return outcome
                    }
                }
                return await group.reduce(into: [Outcome]()) { $0.append($1) }
            }
        }
        report.inserted += outcomes.reduce(0) { $0 + $1.inserted }
        report.duplicates += outcomes.reduce(0) { $0 + $1.duplicates }
        if let error = outcomes.lazy.compactMap(\.error).first { throw error }
    }

    /// One batch's transaction; returns how many of its rows were inserted (the others were already there).
    private static func insert(
        _ rows: ArraySlice<ValidRow>, at start: Int, batch: Int, key: String, bulk: Bool, order: ImportBatchOrder,
        on connection: PGConnection
    ) throws -> Int {
        if bulk { try connection.execute(unsafeSQL: "SET LOCAL quote_import.bulk = on") }
        try connection.execute(
            unsafeSQL: """
                CREATE TEMPORARY TABLE IF NOT EXISTS quote_import_rows (
                    position bigint, text text, author text, category text) ON COMMIT DELETE ROWS
                """)
        _ = try connection.copyIn(
            unsafeSQL: "COPY quote_import_rows (position, text, author, category) FROM STDIN",
            rows: copyText(rows, firstPosition: start))
        if bulk {
            // The words the vocabulary's trigger would count, counted before the rows go in (side by side).
            try connection.query(
                """
                SELECT quote_import_count_words(array_agg(r.text), array_agg(r.author), 1) FROM quote_import_rows r
                """)
        }
        try order.waitUntilInserted(batch - 1)
        // Dated from the import's start, a microsecond apart: a file's first quote is the newest.
        let inserted = try connection.query(
            """
            INSERT INTO quotes (text, author, category, created_at)
            SELECT r.text, r.author, r.category, i.started_at - r.position * interval '1 microsecond'
            FROM quote_import_rows r, quote_imports i WHERE i.key = \(key)
            ORDER BY r.position
            ON CONFLICT DO NOTHING
            """
        ).affectedRows
        order.markInserted(batch)
        if bulk && inserted < rows.count {
            // Rows already there were counted above: counted back.
            try connection.query(
                """
                SELECT quote_import_count_words(array_agg(r.text), array_agg(r.author), -1)
                FROM quote_import_rows r, quote_imports i
                WHERE i.key = \(key) AND NOT EXISTS (
                    SELECT 1 FROM quotes q
                    WHERE q.created_at = i.started_at - r.position * interval '1 microsecond'
                      AND q.text = r.text AND q.author = r.author)
                """)
        }
        try order.waitUntilCommitted(batch - 1)
        try connection.query(
            "UPDATE quote_imports SET done = done + \(rows.count), updated_at = now() WHERE key = \(key)")
        return inserted
    }
}
