import HTTPServer
import Logging
import PGClient
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
        RestError(status: 400, code: "PGRST204", message: "Could not find the '\(column)' column of '\(table)' in the schema cache")
    }

    static func unknownTable(_ table: String) -> RestError {
        RestError(status: 404, code: "PGRST205", message: "Could not find the table 'public.\(table)' in the schema cache")
    }

    /// A row rule refused a write: 401 for the anonymous role, 403 for a user (as PostgREST answers 42501).
    static func rowRule(_ table: String, anonymous: Bool, insert: Bool) -> RestError {
        RestError(
            status: anonymous ? 401 : 403, code: "42501",
            message: insert ? "new row violates row-level security policy for table \"\(table)\"" : "permission denied for table \(table)")
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
        return response
    }

    /// The PostgREST answer for anything a handler throws; unexpected errors are logged, never shown.
    static func answer(for error: any Error, anonymous: Bool, logger: Logger) -> Response {
        if let outage = DatabaseUnavailable(error) { return unavailable(outage) }
        if let quota = QuotaExceeded(error) {
            return RestError(status: 403, code: "QV001", message: quota.message, details: quota.quota,
                             hint: "Delete some rows first (README, Per-account quotas)").response
        }
        switch error {
        case let error as RestError:
            return error.response
        case let refusal as SupabaseCaller.Refusal:
            switch refusal {
            case .missingKey: return RestError(status: 401, code: "PGRST301", message: "No API key found in request").response
            case .expiredToken: return RestError(status: 401, code: "PGRST303", message: "JWT expired").response
            case .invalidToken: return RestError(status: 401, code: "PGRST301", message: "JWT could not be verified").response
            }
        case let error as QuoteVaultError:
            return from(error, logger: logger)
        case let error as HTTPError where error.code == "invalid_json":
            return RestError(status: 400, code: "PGRST102", message: "Empty or invalid json").response
        case let error as HTTPError:
            var response = RestError(status: error.status, code: "PGRST100", message: error.detail ?? error.title)
                .response
            for (name, value) in error.headers { response.headers.set(name, value) }
            return response
        case let error as PGError where error.kind == .server:
            return fromServer(error, anonymous: anonymous, logger: logger).response
        default:
            logger.error("rest request failed", metadata: ["error": "\(error)"])
            return RestError(status: 500, code: "PGRST000", message: "Unexpected failure").response
        }
    }

    /// The service's own failures, at the status `/v1` gives them.
    private static func from(_ error: QuoteVaultError, logger: Logger) -> Response {
        let refusal: (status: Int, seconds: Int, message: String)
        switch error {
        case .validation(let fields):
            let message = fields.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
            return RestError(status: 400, code: "23514", message: message).response
        case .unauthorized:
            return RestError(status: 401, code: "PGRST301", message: "JWT could not be verified").response
        case .notFound:
            return RestError(status: 404, code: "PGRST116", message: "The result contains 0 rows").response
        case .unsupportedMediaType(let detail):
            return RestError(status: 415, code: "PGRST107", message: detail).response
        case .rateLimited(let seconds): refusal = (429, seconds, "Too many requests; try again later")
        case .busy(let seconds): refusal = (503, seconds, "The server is busy; try again shortly")
        default:
            logger.error("rest request failed", metadata: ["error": "\(error)"])
            return RestError(status: 500, code: "PGRST000", message: "Unexpected failure").response
        }
        var response = RestError(status: refusal.status, code: "PGRST\(refusal.status)", message: refusal.message)
            .response
        response.headers.set("Retry-After", String(refusal.seconds))
        return response
    }

    /// The database cannot serve the request now (`DatabaseUnavailable`): 503, as on every surface, with the
    /// code PostgREST gives the same failure (PGRST000 cannot connect, PGRST003 no pool connection) or SQLSTATE.
    static func unavailable(_ outage: DatabaseUnavailable) -> Response {
        let code: String
        switch outage.reason {
        case .unreachable: code = "PGRST000"
        case .poolExhausted: code = "PGRST003"
        case .readOnly: code = "25006"
        case .statementTimeout: code = "57014"
        }
        var response = RestError(status: 503, code: code, message: outage.message).response
        response.headers.set(outage.retryAfterHeader.name, outage.retryAfterHeader.value)
        return response
    }

    /// PostgreSQL's own errors keep their SQLSTATE, message and detail, as PostgREST shows them.
    private static func fromServer(_ error: PGError, anonymous: Bool, logger: Logger) -> RestError {
        let code = error.sqlState?.rawValue ?? "XX000"
        let status: Int
        switch code {
        case "23505", "23503": status = 409
        case "42501": status = anonymous ? 401 : 403
        // Bad input, a query the client shaped that PostgreSQL refuses, or one past a limit of PostgreSQL's.
        case _ where ["22", "23", "42", "54"].contains(code.prefix(2)): status = 400
        default:
            logger.error("rest query failed", metadata: ["error": "\(error)"])
            return RestError(status: 500, code: code, message: "Unexpected failure")
        }
        return RestError(status: status, code: code, message: error.message, details: error.detail, hint: error.hint)
    }
}
