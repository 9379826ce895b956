import HTTPServer
import QuoteVault

/// PostgREST's error answer: `{code, details, hint, message}` (`details`/`hint` strings or null: supabase-swift
/// requires `message`, and a string or null `details`).
struct RestError: Error {
    var status: Int
    var code: String
    var message: String
    var details: String?
    var hint: String?
    /// Past one of the surface's bounds (README, "Bounds on /rest/v1"): answered after the refusal delay.
    var pastBound = false
    var retryAfterSeconds: Int? = nil

    static func parse(_ message: String) -> RestError {
        RestError(status: 400, code: "PGRST100", message: "failed to parse the request: \(message)")
    }

    /// A request past one of the bounds on what a query may ask (items, nesting, list values, pattern length).
    static func pastBound(_ message: String) -> RestError {
        var error = parse(message)
        error.pastBound = true
        return error
    }

    static func unknownColumn(_ column: String, table: String) -> RestError {
        RestError(
            status: 400, code: "PGRST204",
            message: "Could not find the '\(column)' column of '\(table)' in the schema cache")
    }

    static func unknownTable(_ table: String) -> RestError {
        RestError(
            status: 404, code: "PGRST205", message: "Could not find the table 'public.\(table)' in the schema cache")
    }

    /// A row rule refused a write: 401 for the anonymous role, 403 for a user (as PostgREST answers 42501).
    static func rowRule(_ table: String, anonymous: Bool, insert: Bool) -> RestError {
        RestError(
            status: anonymous ? 401 : 403, code: "42501",
            message: insert
                ? "new row violates row-level security policy for table \"\(table)\""
                : "permission denied for table \(table)")
    }

    /// A write that would change a quote once shown as a quote of the day (kept as it was shown).
    static let frozenQuote = RestError(
        status: 409, code: "55000", message: "A quote that has been a quote of the day cannot be changed",
        hint: "Add a new quote instead")

    static func missingWhere(_ verb: String) -> RestError {
        RestError(status: 400, code: "21000", message: "\(verb) requires a WHERE clause")
    }

    var response: Response {
        var writer = JSONWriter(capacity: 256)
        writer.raw("{")
        writer.key("code"); writer.string(code); writer.comma()
        writer.key("details"); writer.string(details); writer.comma()
        writer.key("hint"); writer.string(hint); writer.comma()
        writer.key("message"); writer.string(message)
        writer.raw("}")
        var response = Response.json(bytes: writer.bytes, status: status)
        response.isRefusalPastABound = pastBound
        if let retryAfterSeconds { response.headers.set("Retry-After", String(retryAfterSeconds)) }
        return response
    }

    /// PostgREST's answer for `failure`. A refusal of the row rules is 401 for the anonymous role and 403 for a
    /// user (PostgREST's rule for 42501); a check violation is 400 (PostgREST's status for SQLSTATE 23514).
    static func from(_ failure: Failure, anonymous: Bool) -> RestError {
        var error: RestError
        switch failure {
        case .databaseUnavailable(let outage):
            // The code PostgREST gives the same failure (PGRST000 cannot connect, PGRST003 no pool connection) or
            // the SQLSTATE.
            let codes: [DatabaseOutage: String] = [
                .unreachable: "PGRST000", .poolExhausted: "PGRST003", .readOnly: "25006", .statementTimeout: "57014",
            ]
            error = RestError(status: 503, code: codes[outage] ?? "PGRST000", message: outage.message)
        case .quotaExceeded(let quota, let message):
            return RestError(
                status: 403, code: "QV001", message: message, details: quota,
                hint: "Delete some rows first (README, Per-account quotas)")
        case .badRequest("invalid_json", _):
            return RestError(status: 400, code: "PGRST102", message: "Empty or invalid json")
        case .validation(let fields):
            let message = fields.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
            return RestError(status: 400, code: "23514", message: message)
        case .unauthorized: return RestError(status: 401, code: "PGRST301", message: "JWT could not be verified")
        case .forbidden(let message): return RestError(status: anonymous ? 401 : 403, code: "42501", message: message)
        case .notFound: return RestError(status: 404, code: "PGRST116", message: "The result contains 0 rows")
        case .unsupportedMediaType(let detail): return RestError(status: 415, code: "PGRST107", message: detail)
        case .rejectedByDatabase(let rejection):
            let status = rejection.sqlState == "42501" && anonymous ? 401 : rejection.status
            return RestError(
                status: status, code: rejection.sqlState, message: rejection.message,
                details: rejection.detail, hint: rejection.hint)
        case .internal: return RestError(status: 500, code: "PGRST000", message: "Unexpected failure")
        default:
            error = RestError(
                status: failure.status, code: "PGRST\(failure.status == 400 ? 100 : failure.status)",
                message: ProblemJSON.problem(failure).detail ?? "")
        }
        if let seconds = failure.retryAfterSeconds { error.retryAfterSeconds = seconds }
        return error
    }
}

/// `/rest/v1`'s dialect: PostgREST's `{code, details, hint, message}`.
struct PostgRESTDialect: ErrorDialect {
    func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response {
        switch thrown {
        case let error as RestError: return error.response
        case SupabaseCaller.Refusal.missingKey:
            return RestError(status: 401, code: "PGRST301", message: "No API key found in request").response
        case SupabaseCaller.Refusal.expiredToken:
            return RestError(status: 401, code: "PGRST303", message: "JWT expired").response
        default:
            // A refusal before the caller is known is the anonymous role's.
            let anonymous = (request.caller as? SupabaseCaller).map { $0 == .anonymous } ?? true
            return RestError.from(failure, anonymous: anonymous).response
        }
    }
}
