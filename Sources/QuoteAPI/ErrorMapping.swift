import HTTPServer
import PGClient
import QuoteVault

// The one place where service and database errors become HTTP problems.

extension QuoteVaultError: HTTPErrorConvertible {
    public var httpError: HTTPError {
        switch self {
        case .validation(let fields):
            return .validation(fields.map { HTTPError.FieldError(field: $0.field, message: $0.message) })
        case .notFound:
            return .notFound()
        case .emailExists:
            return HTTPError(status: 409, code: "email_exists", title: "Email already registered",
                             detail: "An account with this email already exists")
        case .invalidCredentials:
            return HTTPError(status: 401, code: "invalid_credentials", title: "Invalid credentials",
                             detail: "The email or password is wrong")
        case .unauthorized:
            return .unauthorized()
        case .refreshTokenInvalid:
            return HTTPError(status: 401, code: "refresh_token_invalid", title: "Invalid refresh token",
                             detail: "The refresh token is unknown, expired or revoked")
        case .refreshTokenReused:
            return HTTPError(status: 401, code: "refresh_token_reused", title: "Refresh token reused",
                             detail: "This refresh token was already used; the session has been revoked")
        case .resetTokenInvalid:
            return HTTPError(status: 400, code: "reset_token_invalid", title: "Invalid reset token",
                             detail: "The reset token is unknown, used or expired")
        case .unsupportedMediaType(let detail):
            return .unsupportedMediaType(detail)
        case .rateLimited(let retryAfter):
            return HTTPError(status: 429, code: "rate_limited", title: "Too many requests",
                             detail: "Too many attempts; try again later", headers: ["Retry-After": String(retryAfter)])
        case .busy(let retryAfter):
            return .serviceUnavailable("The server is busy; try again shortly", retryAfter: retryAfter)
        }
    }
}

extension PGError: HTTPErrorConvertible {
    /// The database being unavailable (`DatabaseUnavailable`) is `503`, a write past a quota (`QuotaExceeded`)
    /// `403`; anything else is a bug or an unexpected state, `500`. None leaks SQL.
    public var httpError: HTTPError {
        DatabaseUnavailable(self)?.httpError ?? QuotaExceeded(self)?.httpError ?? .internalError
    }
}

extension QuotaExceeded: HTTPErrorConvertible {
    public var httpError: HTTPError {
        HTTPError(status: 403, code: "quota_exceeded", title: "Quota exceeded", detail: message)
    }
}

extension DatabaseUnavailable: HTTPErrorConvertible {
    public var httpError: HTTPError { .serviceUnavailable(message, retryAfter: retryAfterSeconds) }
}

extension SyncTokenExpired: HTTPErrorConvertible {
    public var httpError: HTTPError {
        HTTPError(status: 410, code: "sync_token_expired", title: "Sync token expired",
                  detail: "The token is older than the kept history; sync again without since")
    }
}

extension ConflictError: HTTPErrorConvertible {
    public var httpError: HTTPError { HTTPError(status: 409, code: "conflict", title: "Conflict", detail: detail) }
}

extension HTTPError {
    /// The problem any error thrown by a handler answers as (what the server renders), for code that records
    /// answers itself: the results of a sync batch, idempotent replays.
    static func answering(_ error: any Error) -> HTTPError {
        switch error {
        case let error as HTTPError: return error
        case let error as any HTTPErrorConvertible: return error.httpError
        default: return .internalError
        }
    }
}
