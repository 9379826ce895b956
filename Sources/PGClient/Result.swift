internal import CLibPQ

/// Owns one `PGresult*` and frees it in deinit; everything a caller needs is copied out
/// (rows as Swift strings, errors as `PGError`) so no pointer outlives this object.
final class PGResultHandle {
    private let pointer: OpaquePointer

    /// Takes ownership of `pointer`; nil when libpq returned no result (out of memory or
    /// a dead connection, see `PQerrorMessage`).
    init?(taking pointer: OpaquePointer?) {
        guard let pointer else { return nil }
        self.pointer = pointer
    }

    deinit { PQclear(pointer) }

    /// Whether the statement succeeded (with or without rows).
    var succeeded: Bool {
        switch PQresultStatus(pointer) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: true
        default: false
        }
    }

    /// Whether the server waits for `COPY … FROM STDIN` data.
    var isCopyIn: Bool { PQresultStatus(pointer) == PGRES_COPY_IN }

    /// Copies the result out as text: all rows, column names and the affected-row count.
    func rows() -> PGRows {
        let rowCount = PQntuples(pointer)
        let columnCount = PQnfields(pointer)
        let columns = PGColumns(
            names: (0..<columnCount).map { column in
                PQfname(pointer, column).map { String(cString: $0) } ?? "?column?"
            })
        var rows = [PGRow]()
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values = [String?]()
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(pointer, row, column) == 1 {
                    values.append(nil)
                } else {
                    // Length-delimited: text values never contain NUL, but this avoids a strlen.
                    let bytes = UnsafeRawBufferPointer(
                        start: PQgetvalue(pointer, row, column), count: Int(PQgetlength(pointer, row, column)))
                    values.append(String(decoding: bytes, as: UTF8.self))
                }
            }
            rows.append(PGRow(columns: columns, values: values))
        }
        let tag = PQcmdStatus(pointer).map { String(cString: $0) } ?? ""
        let affected = PQcmdTuples(pointer).flatMap { Int(String(cString: $0)) } ?? 0
        return PGRows(columnSet: columns, rows: rows, affectedRows: affected, commandTag: tag)
    }

    /// The error this result reports. `connectionBroken` (PQstatus after the call) decides
    /// between a server error and a connection failure.
    func error(connectionBroken: Bool, query: String?) -> PGError {
        func field(_ code: Int32) -> String? {
            PQresultErrorField(pointer, code).map { String(cString: $0) }
        }
        let fullMessage = PQresultErrorMessage(pointer).map { String(cString: $0) } ?? ""
        let message =
            field(clibpq_diag_message_primary())
            ?? trimmedLibpqMessage(fullMessage.isEmpty ? "unknown error" : fullMessage)
        return PGError(
            kind: connectionBroken ? .connection : .server,
            sqlState: field(clibpq_diag_sqlstate()).map(PGError.SQLState.init(rawValue:)),
            message: message,
            detail: field(clibpq_diag_message_detail()),
            hint: field(clibpq_diag_message_hint()),
            constraint: field(clibpq_diag_constraint_name()),
            table: field(clibpq_diag_table_name()),
            column: field(clibpq_diag_column_name()),
            query: query)
    }
}

/// The primary message of a notice; `result` is borrowed from libpq's notice callback.
func noticeMessage(of result: OpaquePointer) -> String {
    PQresultErrorField(result, clibpq_diag_message_primary()).map { String(cString: $0) }
        ?? PQresultErrorMessage(result).map { trimmedLibpqMessage(String(cString: $0)) } ?? ""
}

/// libpq messages end in a newline and may span lines; keep them one-line for logs.
func trimmedLibpqMessage(_ message: String) -> String {
    message.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }.joined(separator: " ")
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return text
    }
}
