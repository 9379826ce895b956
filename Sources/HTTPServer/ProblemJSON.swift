import Failures

/// The `/v1` dialect: RFC 9457 problem+json with the contract's stable `code`s.
public struct ProblemJSON: ErrorDialect {
    public init() {}

    public func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response {
        ((thrown as? HTTPError) ?? Self.problem(failure)).response
    }

    /// The problem+json shape of `failure`.
    public static func problem(_ failure: Failure) -> HTTPError {
        let (title, detail) = texts(failure)
        var problem = HTTPError(
            status: failure.status, code: failure.code, title: title, detail: detail, errors: failure.fieldErrors)
        if let seconds = failure.retryAfterSeconds { problem.headers["Retry-After"] = String(seconds) }
        return problem
    }

    private static func texts(_ failure: Failure) -> (title: String, detail: String) {
        switch failure {
        case .badRequest(let code, let detail):
            (
                ["invalid_json": "Invalid JSON", "invalid_multipart": "Invalid multipart body"][code] ?? "Bad request",
                detail
            )
        case .validation(let fields):
            ("Validation failed", fields.map { "\($0.field) \($0.message)" }.joined(separator: "; "))
        case .unsupportedMediaType(let detail): ("Unsupported media type", detail)
        case .payloadTooLarge(let limit): ("Payload too large", "The body exceeds \(limit) bytes")
        case .unauthorized: ("Unauthorized", "Missing or invalid access token")
        case .invalidCredentials: ("Invalid credentials", "The email or password is wrong")
        case .refreshTokenInvalid: ("Invalid refresh token", "The refresh token is unknown, expired or revoked")
        case .refreshTokenReused:
            ("Refresh token reused", "This refresh token was already used; the session has been revoked")
        case .userBanned: ("Account disabled", "The owners of this service disabled this account")
        case .resetTokenInvalid: ("Invalid reset token", "The reset token is unknown, used or expired")
        case .forbidden(let detail): ("Forbidden", detail)
        case .quotaExceeded(_, let message): ("Quota exceeded", message)
        case .notFound: ("Not found", "Not found")
        case .conflict(let detail, _): ("Conflict", detail)
        case .emailExists: ("Email already registered", "An account with this email already exists")
        case .idempotencyKeyReused: ("Idempotency key reused", "This Idempotency-Key was used for another request")
        case .syncTokenExpired:
            ("Sync token expired", "The token is older than the kept history; sync again without since")
        case .rateLimited: ("Too many requests", "Too many attempts; try again later")
        case .busy: ("Service unavailable", "The server is busy; try again shortly")
        case .databaseUnavailable(let outage): ("Service unavailable", outage.message)
        case .rejectedByDatabase(let rejection): ("Rejected", rejection.message)
        case .internal: ("Internal server error", "An unexpected error occurred")
        }
    }
}

extension HTTPError: FailureConvertible {
    /// The HTTP layer's own refusals (a body that is not JSON, a bad path parameter) as the one failure type.
    public var failure: Failure {
        switch status {
        case 400: .badRequest(code: code, detail: detail ?? title)
        case 401: .unauthorized
        case 404: .notFound
        case 413: .payloadTooLarge(limit: 0)
        case 415: .unsupportedMediaType(detail ?? title)
        case 422: .validation(errors)
        case 429: .rateLimited(retryAfterSeconds: headers["Retry-After"].flatMap(Int.init) ?? 1)
        case 503: .busy(retryAfterSeconds: headers["Retry-After"].flatMap(Int.init) ?? 1)
        default: .internal
        }
    }
}
