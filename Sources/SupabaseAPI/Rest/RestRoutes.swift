import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// `/rest/v1`: the PostgREST subset the Supabase clients use on the app's tables, with Supabase's row rules
/// (`RestSchema`) enforced in the generated SQL. Writes to columns with business rules go through the same
/// services as `/v1` (profiles through `ProfileService`, collection names through `CollectionsService`).
struct RestRoutes {
    let context: SupabaseContext

    var routes: [Route] {
        [
            Route(.get, "/rest/v1/{table}", handler: answering(read)),
            Route(.post, "/rest/v1/{table}", maxBodySize: 1 << 20, handler: answering(insert)),
            Route(.patch, "/rest/v1/{table}", maxBodySize: 1 << 20, handler: answering(update)),
            Route(.delete, "/rest/v1/{table}", handler: answering(delete)),
            Route(.post, "/rest/v1/rpc/{function}", handler: answering(rpc)),
        ]
    }

    private typealias RestHandler = @Sendable (Request, SupabaseCaller) async throws -> Response

    /// Resolves the caller and answers whatever the handler throws in PostgREST's error format.
    private func answering(_ handler: @escaping RestHandler) -> Handler {
        let context = self.context
        return Handler { request in
            var anonymous = true
            do {
                let caller = try await SupabaseCaller.resolve(request, context: context)
                anonymous = caller == .anonymous
                // Only the `public` schema exists here.
                for header in ["Accept-Profile", "Content-Profile"] {
                    if let profile = request.headers[header], profile != "public" {
                        throw RestError(status: 406, code: "PGRST106", message: "Invalid schema: \(profile)",
                                        hint: "Only the following schemas are exposed: public")
                    }
                }
                return try await handler(request, caller)
            } catch {
                return RestError.answer(for: error, anonymous: anonymous, logger: context.logger)
            }
        }
    }

    // MARK: request details

    /// `Prefer: return=representation, count=exact, resolution=…` as a dictionary.
    private static func preferences(_ request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for item in (request.headers["Prefer"] ?? "").split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2 { result[pair[0]] = pair[1] }
        }
        return result
    }

    private static func wantsSingleObject(_ request: Request) -> Bool {
        request.headers["Accept"]?.contains("application/vnd.pgrst.object+json") ?? false
    }

    private static func json(_ body: String, status: Int, contentRange: String? = nil) -> Response {
        var headers: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8"]
        if let contentRange { headers.set("Content-Range", contentRange) }
        return Response(status: status, headers: headers, body: Array(body.utf8))
    }

    /// The one object of a one-row JSON array, or PostgREST's 406 for any other count.
    private static func singleObject(_ array: String, rows: Int) throws -> String {
        guard rows == 1 else { throw notSingular(rows) }
        let trimmed = array.trimmingCharacters(in: .whitespacesAndNewlines)
        return String(trimmed.dropFirst().dropLast())
    }

    private static func notSingular(_ rows: Int) -> RestError {
        RestError(status: 406, code: "PGRST116", message: "Cannot coerce the result to a single JSON object",
                  details: "The result contains \(rows) rows")
    }

    /// Inside a write's transaction: a client that asked for one object gets 406 and nothing is changed when the
    /// write touched any other number of rows (as PostgREST rolls back).
    private static func checkSingular(_ request: Request, rows: Int) throws {
        if wantsSingleObject(request), rows != 1 { throw notSingular(rows) }
    }

    /// The JSON body: one object or an array of objects (bulk insert).
    private static func bodyRows(_ request: Request) throws -> [[String: JSONValue]] {
        let value = try request.decodeJSON(JSONValue.self)
        switch value {
        case .object(let object): return [object]
        case .array(let items):
            return try items.map {
                guard case .object(let object) = $0 else { throw RestError(status: 400, code: "PGRST102", message: "All object keys must match") }
                return object
            }
        default: throw RestError(status: 400, code: "PGRST102", message: "Empty or invalid json")
        }
    }

    private static func encode(_ rows: [[String: JSONValue]]) throws -> PGJSON {
        PGJSON(data: try JSONEncoder().encode(rows))
    }

    // MARK: read

    @Sendable private func read(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let sql = RestSQL(caller: caller)
        let table = try sql.table(request.pathParameter("table"))
        let query = try RestQuery.parse(request.query)
        let counted = Self.preferences(request)["count"] != nil
        let isHead = request.method == .head
        let read = isHead ? try sql.pageCount(query, from: table) : try sql.read(query, from: table)
        let count = counted ? try sql.count(query, from: table) : nil
        let (body, rows, total) = try await context.pool.withConnection { connection in
            let page = try connection.query(read)
            let row = page[page.startIndex]
            let total = try count.map { try connection.query($0).first?.decode("total", as: Int.self) ?? 0 }
            return (try row.decode("body", as: String.self), try row.decode("rows", as: Int.self), total)
        }
        let offset = query.offset ?? 0
        if let total, offset > 0, offset >= total {
            var response = RestError(status: 416, code: "PGRST103", message: "Requested range not satisfiable",
                                     details: "An offset of \(offset) was requested, but there are only \(total) rows.").response
            response.headers.set("Content-Range", "*/\(total)")
            return response
        }
        let range = rows > 0 ? "\(offset)-\(offset + rows - 1)/\(total.map(String.init) ?? "*")" : "*/\(total.map(String.init) ?? "*")"
        if Self.wantsSingleObject(request) {
            return Self.json(try Self.singleObject(body, rows: rows), status: 200)
        }
        let partial = total.map { rows < $0 } ?? false
        return Self.json(body, status: partial ? 206 : 200, contentRange: range)
    }

    // MARK: write checks

    /// The columns a write names: each must exist and be writable, and the table must take writes. The service
    /// role writes every column of every table but two: profiles (each user's own, through their rules) and a
    /// quote_of_day row once written (a day's quote is kept as it was shown; new dates may be pinned).
    private func checkWritable(_ keys: Set<String>, table: RestSchema.Table, caller: SupabaseCaller, insert: Bool) throws {
        if caller == .serviceRole {
            if table.name == "profiles" || (table.name == "quote_of_day" && !insert) {
                throw RestError(status: 403, code: "42501", message: insert ? "new row violates row-level security policy for table \"\(table.name)\""
                                    : "permission denied for table \(table.name)",
                                hint: table.name == "profiles" ? "profiles are written by their owners" : "a date's quote is kept once chosen; pin dates that have none")
            }
            for key in keys.sorted() { _ = try RestSQL(caller: caller).column(key, of: table) }
            return
        }
        if case .publicReadOnly = table.rule { throw RestError.rowRule(table.name, anonymous: caller.user == nil, insert: insert) }
        guard caller.user != nil else { throw RestError.rowRule(table.name, anonymous: true, insert: insert) }
        for key in keys.sorted() {
            let column = try RestSQL(caller: caller).column(key, of: table)
            guard column.writable else { throw RestError.rowRule(table.name, anonymous: false, insert: insert) }
        }
    }

    /// Fills the owner column with the caller (as Supabase's `default auth.uid()`) and refuses a row owned
    /// by someone else; applies the services' own validation to collection names.
    private func prepare(_ rows: [[String: JSONValue]], table: RestSchema.Table, caller: SupabaseCaller, insert: Bool) throws
        -> [[String: JSONValue]]
    {
        try rows.map { row in
            var row = row
            if case .ownedBy(let column) = table.rule, let user = caller.user {
                if let owner = row[column] {
                    guard owner.stringValue?.lowercased() == user.userID.canonicalText else {
                        throw RestError.rowRule(table.name, anonymous: false, insert: true)
                    }
                } else if insert {
                    row[column] = .string(user.userID.canonicalText)
                }
            }
            if table.name == "collections", let name = row["name"] {
                guard let text = name.stringValue else { throw QuoteVaultError.invalid("name", "must be a string") }
                row["name"] = .string(try CollectionsService.validateName(text))
            }
            return row
        }
    }

    // MARK: insert and upsert

    /// The most rows one POST writes; a larger array is refused whole (413), before any SQL.
    static let maximumRowsPerWrite = 1000

    @Sendable private func insert(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let sql = RestSQL(caller: caller)
        let table = try sql.table(request.pathParameter("table"))
        let query = try RestQuery.parse(request.query)
        var rows = try Self.bodyRows(request)
        guard rows.count <= Self.maximumRowsPerWrite else {
            throw RestError(status: 413, code: "54000", message: "A write takes at most \(Self.maximumRowsPerWrite) rows",
                            details: "The request has \(rows.count) rows")
        }
        guard !rows.isEmpty else { return Self.json("[]", status: 201, contentRange: "*/*") }
        try checkWritable(Set(rows.flatMap(\.keys)), table: table, caller: caller, insert: true)
        let preferences = Self.preferences(request)
        if table.name == "profiles", let user = caller.user {
            return try await upsertProfiles(rows, request: request, query: query, user: user, sql: sql)
        }
        if caller == .serviceRole, table.name == "quote_of_day", preferences["resolution"] == "merge-duplicates" {
            try checkWritable([], table: table, caller: caller, insert: false)
        }
        rows = try prepare(rows, table: table, caller: caller, insert: true)

        var columns = Array(Set(rows.flatMap(\.keys))).sorted()
        // Rows that name no column at all: every writable column, as NULLs (refused by the table's own rules).
        if columns.isEmpty { columns = table.columns.filter(\.writable).map(\.name) }
        let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let rowsJSON = try Self.encode(rows)
        let incoming = PGQuery(unsafeSQL: "json_populate_recordset(NULL::\"\(table.name)\", ") + "\(rowsJSON)" + PGQuery(unsafeSQL: "::json)")
        var statement: PGQuery = "INSERT INTO \(unsafeSQL: "\"\(table.name)\"") AS t0 (\(unsafeSQL: list)) SELECT \(unsafeSQL: list) FROM "
        statement.append(incoming)
        // Upserts: the conflict target must be a unique key, and a conflicting row is only ever updated when the
        // caller's row rule allows it (the guard is in the statement itself, so no race can slip past it).
        var foreignConflicts: PGQuery?
        if let resolution = preferences["resolution"] {
            let target = try conflictTarget(query.onConflict, of: table)
            let conflict = "ON CONFLICT (\(target.map { "\"\($0)\"" }.joined(separator: ", ")))"
            let updates = columns.filter { !target.contains($0) }
            if resolution == "merge-duplicates" {
                // With nothing to change, the conflicting row is still "updated" to itself so that it is returned.
                var set = (updates.isEmpty ? [target[0]] : updates).map { "\"\($0)\" = EXCLUDED.\"\($0)\"" }
                if table.touchesUpdatedAt, !updates.isEmpty { set.append("updated_at = now()") }
                statement.append(PGQuery(unsafeSQL: " \(conflict) DO UPDATE SET \(set.joined(separator: ", ")) WHERE "))
                statement.append(sql.rule(table, alias: "t0"))
            } else {
                statement.append(PGQuery(unsafeSQL: " \(conflict) DO NOTHING"))
            }
            var check = PGQuery(unsafeSQL: "SELECT count(*)::int8 AS foreign_rows FROM ")
            check.append(incoming)
            check.append(PGQuery(unsafeSQL: " i WHERE EXISTS (SELECT 1 FROM \"\(table.name)\" t0 WHERE "
                + target.map { "t0.\"\($0)\" = i.\"\($0)\"" }.joined(separator: " AND ") + " AND NOT ("))
            check.append(sql.rule(table, alias: "t0"))
            check.append(PGQuery(unsafeSQL: "))"))
            foreignConflicts = check
        }
        statement.append(" RETURNING t0.*, (t0.xmax = 0) AS qv_inserted")
        let wrapped = try sql.changed(statement, select: query.select, table: table)
        let conflictCheck = foreignConflicts
        let ownershipCheck: PGQuery? = {
            guard case .ownedThrough(let column, let owner, let ownerColumn) = table.rule, let user = caller.user else { return nil }
            var check = PGQuery(unsafeSQL: "SELECT count(*)::int8 AS foreign_rows FROM ")
            check.append(incoming)
            check.append(PGQuery(unsafeSQL: " i WHERE NOT EXISTS (SELECT 1 FROM \"\(owner)\" o WHERE o.id = i.\"\(column)\" AND o.\"\(ownerColumn)\" = "))
            check.append("\(user.userID))")
            return check
        }()
        let result = try await context.pool.withTransaction { connection in
            if let ownershipCheck, try connection.query(ownershipCheck).first?.decode("foreign_rows", as: Int.self) ?? 0 > 0 {
                throw RestError.rowRule(table.name, anonymous: false, insert: true)
            }
            let row = try connection.query(wrapped).first
            // After the write (which waited for any concurrent writer of the same keys): a conflicting row the
            // caller may not change refuses the whole request, and the transaction rolls back.
            if let conflictCheck, try connection.query(conflictCheck).first?.decode("foreign_rows", as: Int.self) ?? 0 > 0 {
                throw RestError.rowRule(table.name, anonymous: false, insert: false)
            }
            let rows = try row?.decode("rows", as: Int.self) ?? 0
            try Self.checkSingular(request, rows: rows)
            return (try row?.decode("body", as: String.self) ?? "[]", rows, try row?.decode("inserted", as: Int.self) ?? 0)
        }
        let status = preferences["resolution"] == "merge-duplicates" && result.2 == 0 ? 200 : 201
        guard preferences["return"] == "representation" else { return Response(status: status) }
        if Self.wantsSingleObject(request) { return Self.json(try Self.singleObject(result.0, rows: result.1), status: status) }
        return Self.json(result.0, status: status, contentRange: "*/*")
    }

    /// `on_conflict` (or the primary key): the columns of one of the table's unique keys, in any order.
    private func conflictTarget(_ names: [String]?, of table: RestSchema.Table) throws -> [String] {
        guard let names else { return table.primaryKey }
        for name in names { _ = try RestSQL(caller: .anonymous).column(name, of: table) }
        guard Set(names) == Set(table.primaryKey), names.count == table.primaryKey.count else {
            throw RestError(status: 400, code: "42P10",
                            message: "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                            hint: "on_conflict must name exactly the columns of \(table.name)'s key: \(table.primaryKey.joined(separator: ","))")
        }
        return names
    }

    /// Profiles exist from sign-up on, so an insert or upsert of one's own profile is an update through
    /// `ProfileService` (its validation and preference merging), answered as PostgREST would.
    private func upsertProfiles(
        _ rows: [[String: JSONValue]], request: Request, query: RestQuery, user: AuthenticatedUser, sql: RestSQL
    ) async throws -> Response {
        // A caller has exactly one profile row; two rows would both land on it.
        guard rows.count == 1, let row = rows.first else {
            throw RestError(status: 400, code: "21000", message: "ON CONFLICT DO UPDATE command cannot affect row a second time",
                            hint: "A user has one profile: write it with one object")
        }
        if let id = row["id"], id.stringValue?.lowercased() != user.userID.canonicalText {
            throw RestError.rowRule("profiles", anonymous: false, insert: true)
        }
        _ = try await context.profiles.replaceColumns(
            user.userID, displayName: row["display_name"], avatarURL: row["avatar_url"], preferences: row["preferences"])
        var own = query
        own.conditions = [.compare(column: "id", op: .eq, value: .text(user.userID.uuidString), negated: false)]
        let read = try sql.read(own, from: try sql.table("profiles"))
        let body = try await context.pool.withConnection { try $0.query(read).first?.decode("body", as: String.self) ?? "[]" }
        guard Self.preferences(request)["return"] == "representation" else { return Response(status: 200) }
        if Self.wantsSingleObject(request) { return Self.json(try Self.singleObject(body, rows: 1), status: 200) }
        return Self.json(body, status: 200, contentRange: "*/*")
    }

    // MARK: update and delete

    @Sendable private func update(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let sql = RestSQL(caller: caller)
        let table = try sql.table(request.pathParameter("table"))
        let query = try RestQuery.parse(request.query)
        guard !query.conditions.isEmpty else { throw RestError.missingWhere("UPDATE") }
        guard case .object(var changes) = try request.decodeJSON(JSONValue.self) else {
            throw RestError(status: 400, code: "PGRST102", message: "Empty or invalid json")
        }
        try checkWritable(Set(changes.keys), table: table, caller: caller, insert: false)
        if table.name == "profiles", let user = caller.user {
            // Only the caller's own row is visible; change it through the service when the filters select it.
            var probe = query
            probe.select = [.column(name: "id", alias: nil)]
            let probeSQL = try sql.read(probe, from: table)
            let visible = try await context.pool.withConnection { try $0.query(probeSQL).first?.decode("rows", as: Int.self) ?? 0 }
            if visible > 0 {
                if let id = changes["id"], id.stringValue?.lowercased() != user.userID.canonicalText {
                    throw RestError.rowRule("profiles", anonymous: false, insert: false)
                }
                _ = try await context.profiles.replaceColumns(
                    user.userID, displayName: changes["display_name"], avatarURL: changes["avatar_url"], preferences: changes["preferences"])
            }
            let read = try sql.read(query, from: table)
            let (body, rows) = try await context.pool.withConnection { connection in
                let row = try connection.query(read)[0]
                return (try row.decode("body", as: String.self), try row.decode("rows", as: Int.self))
            }
            return try respondChanged(request, body: visible > 0 ? body : "[]", rows: visible > 0 ? rows : 0, range: rows > 0 && visible > 0 ? "0-\(rows - 1)/*" : "*/*")
        }
        changes = try prepare([changes], table: table, caller: caller, insert: false)[0]
        var assignments = changes.keys.sorted().map { "\"\($0)\" = src.\"\($0)\"" }
        if table.touchesUpdatedAt { assignments.append("updated_at = now()") }
        var statement: PGQuery = "UPDATE \(unsafeSQL: "\"\(table.name)\"") t0 SET \(unsafeSQL: assignments.joined(separator: ", ")) FROM json_populate_record(NULL::\(unsafeSQL: "\"\(table.name)\""), \(try Self.encode([changes]))::json -> 0) src"
        statement.append(try sql.whereClause(query, of: table, alias: "t0"))
        statement.append(" RETURNING t0.*, FALSE AS qv_inserted")
        let wrapped = try sql.changed(statement, select: query.select, table: table)
        // A row may not be moved under an owner that is not the caller (the policy's WITH CHECK).
        let movedCheck: PGQuery? = {
            guard case .ownedThrough(let column, let owner, let ownerColumn) = table.rule, let target = changes[column],
                  let user = caller.user else { return nil }
            return """
                SELECT count(*)::int8 AS owned FROM \(unsafeSQL: "\"\(owner)\"") o
                WHERE o.id = \(target.stringValue ?? "")::uuid AND o.\(unsafeSQL: "\"\(ownerColumn)\"") = \(user.userID)
                """
        }()
        // A quote that has been a quote of the day stays as it was shown (the day's answer is kept forever).
        let frozenCheck: PGQuery? = table.name == "quotes"
            ? PGQuery(unsafeSQL: "SELECT count(*)::int8 AS frozen FROM quotes t0") + (try sql.whereClause(query, of: table, alias: "t0"))
                + PGQuery(unsafeSQL: " AND EXISTS (SELECT 1 FROM quote_of_day d WHERE d.quote_id = t0.id)")
            : nil
        let (body, rows) = try await context.pool.withTransaction { connection in
            if let movedCheck, try connection.query(movedCheck).first?.decode("owned", as: Int.self) ?? 0 == 0 {
                throw RestError.rowRule(table.name, anonymous: false, insert: true)
            }
            if let frozenCheck, try connection.query(frozenCheck).first?.decode("frozen", as: Int.self) ?? 0 > 0 {
                throw RestError(status: 409, code: "55000", message: "A quote that has been a quote of the day cannot be changed",
                                hint: "Add a new quote instead")
            }
            let row = try connection.query(wrapped)[0]
            let rows = try row.decode("rows", as: Int.self)
            try Self.checkSingular(request, rows: rows)
            return (try row.decode("body", as: String.self), rows)
        }
        return try respondChanged(request, body: body, rows: rows, range: rows > 0 ? "0-\(rows - 1)/*" : "*/*")
    }

    @Sendable private func delete(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let sql = RestSQL(caller: caller)
        let table = try sql.table(request.pathParameter("table"))
        let query = try RestQuery.parse(request.query)
        guard !query.conditions.isEmpty else { throw RestError.missingWhere("DELETE") }
        try checkWritable([], table: table, caller: caller, insert: false)
        var statement: PGQuery = "DELETE FROM \(unsafeSQL: "\"\(table.name)\"") t0"
        statement.append(try sql.whereClause(query, of: table, alias: "t0"))
        statement.append(" RETURNING t0.*, FALSE AS qv_inserted")
        let wrapped = try sql.changed(statement, select: query.select, table: table)
        let (body, rows) = try await context.pool.withTransaction { connection in
            let row = try connection.query(wrapped)[0]
            let rows = try row.decode("rows", as: Int.self)
            try Self.checkSingular(request, rows: rows)
            return (try row.decode("body", as: String.self), rows)
        }
        return try respondChanged(request, body: body, rows: rows, range: "*/*")
    }

    /// PATCH and DELETE: the changed rows with `return=representation`, else 204.
    private func respondChanged(_ request: Request, body: String, rows: Int, range: String) throws -> Response {
        guard Self.preferences(request)["return"] == "representation" else { return Response(status: 204) }
        if Self.wantsSingleObject(request) { return Self.json(try Self.singleObject(body, rows: rows), status: 200) }
        return Self.json(body, status: 200, contentRange: range)
    }

    // MARK: rpc

    /// `get_quote_of_the_day()`: today's (UTC) quote by the same rules as `/v1/qotd`, as a quotes row.
    @Sendable private func rpc(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        guard request.pathParameter("function") == "get_quote_of_the_day" else {
            throw RestError(status: 404, code: "PGRST202",
                            message: "Could not find the function public.\(request.pathParameter("function")) without parameters in the schema cache")
        }
        let quote = try await context.quoteOfTheDay.quote(for: PGDate(Date()))
        // The quotes row as PostgREST renders it (row_to_json), the same shape as a `/rest/v1/quotes` read.
        var row = RestQuery()
        row.conditions = [.compare(column: "id", op: .eq, value: .text(quote.id.uuidString), negated: false)]
        let read = try RestSQL(caller: caller).read(row, from: try RestSQL(caller: caller).table("quotes"))
        let body = try await context.pool.withConnection { try $0.query(read)[0].decode("body", as: String.self) }
        return Self.json(try Self.singleObject(body, rows: 1), status: 200)
    }
}
