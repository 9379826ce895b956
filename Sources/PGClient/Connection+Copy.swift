internal import CLibPQ

extension PGConnection {
    /// Runs `COPY … FROM STDIN` (text format, no parameters: `sql` names a table and columns only) and sends
    /// `rows`, already in COPY's text format (tab-separated, escaped, one line a row). Returns the rows copied.
    /// Bulk loads go this way: one statement and one stream instead of a statement per batch of parameters.
    public func copyIn(unsafeSQL sql: String, rows: [UInt8]) throws(PGError) -> Int {
        guard !containsNUL(sql) else {
            throw PGError(kind: .invalidQuery, message: "the SQL text contains a NUL byte")
        }
        let started = PGResultHandle(taking: sql.withCString { PQexec(handle, $0) })
        guard let started else { throw PGError(kind: isBroken ? .connection : .server, message: lastErrorMessage) }
        guard started.isCopyIn else {
            guard started.succeeded else { throw started.error(connectionBroken: isBroken, query: sql) }
            throw PGError(kind: .invalidQuery, message: "not a COPY FROM STDIN statement", query: sql)
        }
        // PQputCopyData takes an Int32 length: sent in chunks.
        let chunk = 1 << 20
        var sent = 0
        var failure: String?
        rows.withUnsafeBufferPointer { buffer in
            while sent < buffer.count, failure == nil {
                let count = min(chunk, buffer.count - sent)
                let ok = buffer.baseAddress!.advanced(by: sent).withMemoryRebound(to: CChar.self, capacity: count) {
                    PQputCopyData(handle, $0, Int32(count))
                }
                if ok != 1 { failure = lastErrorMessage }
                sent += count
            }
        }
        _ = failure == nil ? PQputCopyEnd(handle, nil) : PQputCopyEnd(handle, "the client stopped sending")
        var copied: PGRows?
        var firstError: PGError?
        // The COPY's own result, then NULL (the statement is over).
        while let result = PQgetResult(handle) {
            do { copied = try self.rows(of: result, query: sql) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
        if let failure { throw PGError(kind: .connection, message: failure, query: sql) }
        return copied?.affectedRows ?? 0
    }
}
