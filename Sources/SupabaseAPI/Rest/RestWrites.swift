import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// `/rest/v1` writes: POST (insert and upsert), PATCH and DELETE, with each table's row rule checked in the same
/// transaction as the write.
extension RestRoutes {
    // MARK: write checks

    /// The columns a write names: each must exist and be writable, and the table must take writes. The service
    /// role writes every column of every table as its `serviceRoleWrites` allows.
    func checkWritable(_ keys: Set<String>, table: RestSchema.Table, caller: SupabaseCaller, insert: Bool) throws {
        if caller == .serviceRole {
            let refusal: String?
            switch table.serviceRoleWrites {
            case .all: refusal = nil
            case .insertOnly(let hint): refusal = insert ? nil : hint
            case .none(let hint): refusal = hint
            }
            if let refusal {
                var error = RestError.rowRule(table.name, anonymous: false, insert: insert)
                error.hint = refusal
                throw error
            }
            for key in keys.sorted() { _ = try RestSQL(caller: caller).column(key, of: table) }
            return
        }
        if table.owner == nil { throw RestError.rowRule(table.name, anonymous: caller.user == nil, insert: insert) }
        guard caller.user != nil else { throw RestError.rowRule(table.name, anonymous: true, insert: insert) }
        for key in keys.sorted() {
            let column = try RestSQL(caller: caller).column(key, of: table)
            guard column.writable else { throw RestError.rowRule(table.name, anonymous: false, insert: insert) }
        }
    }

    /// Fills the owner column with the caller (as Supabase's `default auth.uid()`) and refuses a row owned
    /// by someone else; applies the services' own validation where a column declares it.
    func prepare(_ rows: [[String: JSONValue]], table: RestSchema.Table, caller: SupabaseCaller, insert: Bool) throws
        -> [[String: JSONValue]]
    {
        try rows.map { row in
            var row = row
            if case .column(let column)? = table.owner, let user = caller.user {
                if let owner = row[column] {
                    guard owner.stringValue?.lowercased() == user.userID.canonicalText else {
                        throw RestError.rowRule(table.name, anonymous: false, insert: true)
                    }
                } else if insert {
                    row[column] = .string(user.userID.canonicalText)
                }
            }
            for column in table.columns {
                if let normalize = column.normalize, let value = row[column.name] {
                    row[column.name] = try normalize(value)
                }
            }
            return row
        }
    }

    // MARK: insert and upsert

    /// The most rows one POST writes; a larger array is refused whole (413), before any SQL.
    static let maximumRowsPerWrite = 1000

    @Sendable func insert(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let (sql, table, query) = try Self.target(request, caller)
        var rows = try Self.bodyRows(request)
        guard rows.count <= Self.maximumRowsPerWrite else {
            throw RestError(
                status: 413, code: "54000", message: "A write takes at most \(Self.maximumRowsPerWrite) rows",
                details: "The request has \(rows.count) rows")
        }
        guard !rows.isEmpty else { return Self.json("[]", status: 201, contentRange: "*/*") }
        try checkWritable(Set(rows.flatMap(\.keys)), table: table, caller: caller, insert: true)
        let preferences = Self.preferences(request)
        // As PostgREST: a row that exists is a conflict (409, 23505) unless the client asked to merge or ignore it.
        let resolution = preferences["resolution"].flatMap(Resolution.init(rawValue:))
        if table.writer == .profileService, let user = caller.user {
            return try await upsertProfiles(
                rows, request: request, query: query, user: user, sql: sql, resolution: resolution)
        }
        // Merging changes existing rows: the caller must be allowed to.
        if resolution == .mergeDuplicates { try checkWritable([], table: table, caller: caller, insert: false) }
        rows = try prepare(rows, table: table, caller: caller, insert: true)

        var columns = Array(Set(rows.flatMap(\.keys))).sorted()
        // Rows that name no column at all: every writable column, as NULLs (refused by the table's own rules).
        if columns.isEmpty { columns = table.columns.filter(\.writable).map(\.name) }
        let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let name = "\"\(table.name)\""
        let incoming: PGQuery = "json_populate_recordset(NULL::\(unsafeSQL: name), \(try Self.encode(rows))::json)"
        var statement: PGQuery =
            "INSERT INTO \(unsafeSQL: name) AS t0 (\(unsafeSQL: list)) SELECT \(unsafeSQL: list) FROM "
        statement.append(incoming)
        // Upserts: the conflict target must be a unique key, and a conflicting row is only ever updated when the
        // caller's row rule allows it (the guard is in the statement itself, so no race can slip past it).
        var foreignConflicts: PGQuery?
        if let resolution {
            let target = try conflictTarget(query.onConflict, of: table)
            let conflict = "ON CONFLICT (\(target.map { "\"\($0)\"" }.joined(separator: ", ")))"
            let updates = columns.filter { !target.contains($0) }
            if resolution == .mergeDuplicates {
                // With nothing to change, the conflicting row is still "updated" to itself so that it is returned.
                var set = (updates.isEmpty ? [target[0]] : updates).map { "\"\($0)\" = EXCLUDED.\"\($0)\"" }
                if table.touchesUpdatedAt, !updates.isEmpty { set.append("updated_at = now()") }
                let update = "\(conflict) DO UPDATE SET \(set.joined(separator: ", "))"
                statement.append(" \(unsafeSQL: update) WHERE \(sql.rule(table, alias: "t0"))")
            } else {
                statement.append(" \(unsafeSQL: conflict) DO NOTHING")
            }
            let existing =
                "SELECT 1 FROM \(name) t0 WHERE "
                + target.map { "t0.\"\($0)\" = i.\"\($0)\"" }.joined(separator: " AND ")
            foreignConflicts = """
                SELECT count(*)::int8 AS foreign_rows FROM \(incoming) i \
                WHERE EXISTS (\(unsafeSQL: existing) AND NOT (\(sql.rule(table, alias: "t0"))))
                """
        }
        statement.append(" RETURNING t0.*, (t0.xmax = 0) AS qv_inserted")
        let wrapped = try sql.changed(statement, select: query.select, table: table)
        let conflictCheck = foreignConflicts
        // Rows attached through another table (a collection's quotes) must be attached to the caller's.
        let ownershipCheck: PGQuery? = {
            guard case .through? = table.owner, let owner = table.owner, let user = caller.user else { return nil }
            let owned = owner.owned("i", by: user.userID)
            return "SELECT count(*)::int8 AS foreign_rows FROM \(incoming) i WHERE NOT \(owned)"
        }()
        let result = try await Self.keepingShownQuotes {
            try await writeTransaction(request, caller) { connection in
                if let ownershipCheck,
                    try connection.query(ownershipCheck).first?.decode("foreign_rows", as: Int.self) ?? 0 > 0
                {
                    throw RestError.rowRule(table.name, anonymous: false, insert: true)
                }
                let row = try connection.query(wrapped).first
                // After the write (which waited for any concurrent writer of the same keys): a conflicting row the
                // caller may not change refuses the whole request, and the transaction rolls back.
                if let conflictCheck,
                    try connection.query(conflictCheck).first?.decode("foreign_rows", as: Int.self) ?? 0 > 0
                {
                    throw RestError.rowRule(table.name, anonymous: false, insert: false)
                }
                let rows = try row?.decode("rows", as: Int.self) ?? 0
                try Self.checkSingular(request, rows: rows)
                return (
                    try row?.decode("body", as: String.self) ?? "[]", rows,
                    try row?.decode("inserted", as: Int.self) ?? 0
                )
            }
        }
        let status = resolution == .mergeDuplicates && result.2 == 0 ? 200 : 201
        return try respondWritten(request, body: result.0, rows: result.1, status: status, bare: status, range: "*/*")
    }

    /// `Prefer: resolution=…`: what an insert does with a row whose key exists (without it: 409).
    enum Resolution: String {
        /// An upsert: the existing row takes the request's columns.
        case mergeDuplicates = "merge-duplicates"
        /// The existing row stays as it was; the request's row is dropped.
        case ignoreDuplicates = "ignore-duplicates"
    }

    /// `on_conflict` (or the primary key): the columns of one of the table's unique keys, in any order.
    func conflictTarget(_ names: [String]?, of table: RestSchema.Table) throws -> [String] {
        guard let names else { return table.primaryKey }
        for name in names { _ = try RestSQL(caller: .anonymous).column(name, of: table) }
        guard Set(names) == Set(table.primaryKey), names.count == table.primaryKey.count else {
            throw RestError(
                status: 400, code: "42P10",
                message: "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                hint:
                    "on_conflict must name exactly the columns of \(table.name)'s key: "
                    + table.primaryKey.joined(separator: ",")
            )
        }
        return names
    }

    // MARK: update and delete

    @Sendable func update(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let (sql, table, query) = try Self.target(request, caller)
        guard !query.conditions.isEmpty else { throw RestError.missingWhere("UPDATE") }
        guard case .object(var changes) = try request.decodeJSON(JSONValue.self) else {
            throw RestError(status: 400, code: "PGRST102", message: "Empty or invalid json")
        }
        try checkWritable(Set(changes.keys), table: table, caller: caller, insert: false)
        if table.writer == .profileService, let user = caller.user {
            return try await updateProfile(request, query: query, changes: changes, user: user, sql: sql)
        }
        changes = try prepare([changes], table: table, caller: caller, insert: false)[0]
        var assignments = changes.keys.sorted().map { "\"\($0)\" = src.\"\($0)\"" }
        if table.touchesUpdatedAt { assignments.append("updated_at = now()") }
        let name = "\"\(table.name)\""
        var statement: PGQuery = """
            UPDATE \(unsafeSQL: name) t0 SET \(unsafeSQL: assignments.joined(separator: ", "))
            FROM json_populate_record(NULL::\(unsafeSQL: name), \(try Self.encode([changes]))::json -> 0) src
            """
        statement.append(try sql.whereClause(query, of: table, alias: "t0"))
        statement.append(" RETURNING t0.*, FALSE AS qv_inserted")
        let wrapped = try sql.changed(statement, select: query.select, table: table)
        // A row may not be moved under an owner that is not the caller (the policy's WITH CHECK).
        let movedCheck: PGQuery? = {
            guard case .through(let column, _, _)? = table.owner, let owner = table.owner, let target = changes[column],
                let user = caller.user
            else { return nil }
            let (value, owned) = (target.stringValue ?? "", owner.owned("i", by: user.userID))
            return
                "SELECT count(*)::int8 AS owned FROM (SELECT \(value)::uuid AS \(identifier: column)) i WHERE \(owned)"
        }()
        let (body, rows) = try await Self.keepingShownQuotes {
            try await writeTransaction(request, caller) { connection in
                if let movedCheck, try connection.query(movedCheck).first?.decode("owned", as: Int.self) ?? 0 == 0 {
                    throw RestError.rowRule(table.name, anonymous: false, insert: true)
                }
                return try Self.changedRows(wrapped, request, connection)
            }
        }
        let range = rows > 0 ? "0-\(rows - 1)/*" : "*/*"
        return try respondWritten(request, body: body, rows: rows, status: 200, bare: 204, range: range)
    }

    @Sendable func delete(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let (sql, table, query) = try Self.target(request, caller)
        guard !query.conditions.isEmpty else { throw RestError.missingWhere("DELETE") }
        try checkWritable([], table: table, caller: caller, insert: false)
        var statement: PGQuery = "DELETE FROM \(unsafeSQL: "\"\(table.name)\"") t0"
        statement.append(try sql.whereClause(query, of: table, alias: "t0"))
        if !table.deletable { statement.append(" AND FALSE") }
        statement.append(" RETURNING t0.*, FALSE AS qv_inserted")
        let wrapped = try sql.changed(statement, select: query.select, table: table)
        let (body, rows) = try await writeTransaction(request, caller) { try Self.changedRows(wrapped, request, $0) }
        return try respondWritten(request, body: body, rows: rows, status: 200, bare: 204, range: "*/*")
    }

    /// The changed rows' JSON and count (from `RestSQL.changed`); checked by `checkSingular`.
    static func changedRows(_ statement: PGQuery, _ request: Request, _ connection: PGConnection) throws
        -> (body: String, rows: Int)
    {
        let row = try connection.query(statement)[0]
        let rows = try row.decode("rows", as: Int.self)
        try checkSingular(request, rows: rows)
        return (try row.decode("body", as: String.self), rows)
    }

    /// A write the table's trigger refused because it would change a quote once shown as a quote of the day
    /// (migration 0020) answers as PostgREST's 409 with that SQLSTATE.
    static func keepingShownQuotes<T>(_ write: () async throws -> T) async throws -> T {
        do { return try await write() } catch let error as PGError where error.sqlState?.rawValue == "55000" {
            throw RestError.frozenQuote
        }
    }

    /// The written rows with `return=representation` (one object when asked for), else no body and `bare`.
    func respondWritten(_ request: Request, body: String, rows: Int, status: Int, bare: Int, range: String) throws
        -> Response
    {
        guard Self.preferences(request)["return"] == "representation" else { return Response(status: bare) }
        if Self.wantsSingleObject(request) { return Self.json(try Self.singleObject(body, rows: rows), status: status) }
        return Self.json(body, status: status, contentRange: range)
    }
}
