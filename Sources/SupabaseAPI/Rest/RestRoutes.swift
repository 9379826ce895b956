import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// `/rest/v1`: the PostgREST subset the Supabase clients use on the app's tables, with Supabase's row rules
/// (`RestSchema`) enforced in the generated SQL. Writes to columns with business rules go through the same
/// services as `/v1` (profiles through `ProfileService`, collection names through `CollectionsService`).
struct RestRoutes {
    let context: SupabaseContext

    /// Refuses a schema other than `public` (the only one here).
    static let publicSchemaOnly = Stage("public_schema_only") { request, _, next in
        for header in ["Accept-Profile", "Content-Profile"] {
            if let profile = request.headers[header], profile != "public" {
                throw RestError(
                    status: 406, code: "PGRST106", message: "Invalid schema: \(profile)",
                    hint: "Only the following schemas are exposed: public")
            }
        }
        return try await next(request)
    }

    // MARK: request details

    /// The caller's SQL, the table the path names and the parsed query: where every table route starts.
    static func target(_ request: Request, _ caller: SupabaseCaller) throws -> (RestSQL, RestSchema.Table, RestQuery) {
        let sql = RestSQL(caller: caller)
        return (sql, try sql.table(request.pathParameter("table")), try RestQuery.parse(request.query))
    }

    /// `Prefer: return=representation, count=exact, resolution=…` as a dictionary.
    static func preferences(_ request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for item in (request.headers["Prefer"] ?? "").split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2 { result[pair[0]] = pair[1] }
        }
        return result
    }

    static func wantsSingleObject(_ request: Request) -> Bool {
        request.headers["Accept"]?.contains("application/vnd.pgrst.object+json") ?? false
    }

    static func json(_ body: String, status: Int, contentRange: String? = nil) -> Response {
        var headers: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8"]
        if let contentRange { headers.set("Content-Range", contentRange) }
        return Response(status: status, headers: headers, body: Array(body.utf8))
    }

    /// The one object of a one-row JSON array, or PostgREST's 406 for any other count.
    static func singleObject(_ array: String, rows: Int) throws -> String {
        guard rows == 1 else { throw notSingular(rows) }
        let trimmed = array.trimmingCharacters(in: .whitespacesAndNewlines)
        return String(trimmed.dropFirst().dropLast())
    }

    static func notSingular(_ rows: Int) -> RestError {
        RestError(
            status: 406, code: "PGRST116", message: "Cannot coerce the result to a single JSON object",
            details: "The result contains \(rows) rows")
    }

    /// Inside a write's transaction: a client that asked for one object gets 406 and nothing is changed when the
    /// write touched any other number of rows (as PostgREST rolls back).
    static func checkSingular(_ request: Request, rows: Int) throws {
        if wantsSingleObject(request), rows != 1 { throw notSingular(rows) }
    }

    /// The JSON body: one object or an array of objects (bulk insert).
    static func bodyRows(_ request: Request) throws -> [[String: JSONValue]] {
        let value = try request.decodeJSON(JSONValue.self)
        switch value {
        case .object(let object): return [object]
        case .array(let items):
            return try items.map {
                guard case .object(let object) = $0 else {
                    throw RestError(status: 400, code: "PGRST102", message: "All object keys must match")
                }
                return object
            }
        default: throw RestError(status: 400, code: "PGRST102", message: "Empty or invalid json")
        }
    }

    static func encode(_ rows: [[String: JSONValue]]) throws -> PGJSON {
        PGJSON(data: try JSONEncoder().encode(rows))
    }

    // MARK: read

    @Sendable func read(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let (sql, table, query) = try Self.target(request, caller)
        let count = RestCount(preferences: Self.preferences(request))
        let isHead = request.method == .head
        let read = isHead ? try sql.pageCount(query, from: table) : try sql.read(query, from: table)
        let matching = try count.map { _ in try sql.matching(query, from: table) }
        let (body, rows, counted) = try await pool(for: caller, reading: table).withConnection { connection in
            let page = try connection.query(read)
            let row = page[page.startIndex]
            let counted = try matching.flatMap { try count?.total(of: $0, on: connection) }
            return (try row.decode("body", as: String.self), try row.decode("rows", as: Int.self), counted)
        }
        let offset = query.offset ?? 0
        // An estimate is at least what was read.
        let total = counted.map { $0.exact ? $0.rows : max($0.rows, offset + rows) }
        if let total, counted?.exact == true, offset > 0, offset >= total {
            var response = RestError(
                status: 416, code: "PGRST103", message: "Requested range not satisfiable",
                details: "An offset of \(offset) was requested, but there are only \(total) rows."
            ).response
            response.headers.set("Content-Range", "*/\(total)")
            return response
        }
        let range =
            rows > 0
            ? "\(offset)-\(offset + rows - 1)/\(total.map(String.init) ?? "*")" : "*/\(total.map(String.init) ?? "*")"
        if Self.wantsSingleObject(request) {
            return Self.json(try Self.singleObject(body, rows: rows), status: 200)
        }
        let partial = total.map { rows < $0 } ?? false
        return Self.json(body, status: partial ? 206 : 200, contentRange: range)
    }

    /// The anonymous role's reads of public tables run on the public reads' connections (`DB_PUBLIC_POOL_SIZE`),
    /// as `/v1`'s quote pages do, never on those logins and writes need.
    func pool(for caller: SupabaseCaller, reading table: RestSchema.Table) -> PGPool {
        caller == .anonymous && table.owner == nil ? context.publicPool : context.pool
    }

    // MARK: rpc

    /// `get_quote_of_the_day()`: today's (UTC) quote by the same rules as `/v1/qotd`, as a quotes row.
    @Sendable func rpc(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        guard request.pathParameter("function") == "get_quote_of_the_day" else {
            throw RestError(
                status: 404, code: "PGRST202",
                message:
                    "Could not find the function public.\(request.pathParameter("function")) without parameters "
                    + "in the schema cache"
            )
        }
        let quote = try await context.quoteOfTheDay.quote(for: PGDate(Date()))
        // The quotes row as PostgREST renders it (row_to_json), the same shape as a `/rest/v1/quotes` read.
        var row = RestQuery()
        row.conditions = [.compare(column: "id", op: .eq, value: .text(quote.id.uuidString), negated: false)]
        let read = try RestSQL(caller: caller).read(row, from: try RestSQL(caller: caller).table("quotes"))
        let body = try await pool(for: caller, reading: try RestSQL(caller: caller).table("quotes")).withConnection {
            try $0.query(read)[0].decode("body", as: String.self)
        }
        return Self.json(try Self.singleObject(body, rows: 1), status: 200)
    }
}
