/// Every way a request can fail, as one closed set: raised by the domain, classified once from the
/// infrastructure's errors (`Failure(classifying:)` in QuoteVault), rendered once by the route's dialect.
///
/// A failure has one status, the same on every surface; only the body's dialect differs (and where a client
/// library pins a status of its own, the surface's renderer says so).
public enum Failure: Error, Sendable, Equatable {
    /// Malformed input (`invalid_json`, `invalid_multipart`, `bad_request`): 400.
    case badRequest(code: String, detail: String)
    /// Well-formed input with invalid fields: 422.
    case validation([FieldError])
    case unsupportedMediaType(String)
    case payloadTooLarge(limit: Int)
    /// No valid credentials (missing, malformed, forged, expired, revoked): 401.
    case unauthorized
    case invalidCredentials
    case refreshTokenInvalid
    case refreshTokenReused
    /// An account an owner disabled (banned): its password is right, yet it may not sign in. 403.
    case userBanned
    /// A password-reset token unknown, used or expired: 400.
    case resetTokenInvalid
    /// Credentials valid, the act not allowed: 403.
    case forbidden(String)
    /// A write past a per-account quota (`quota`: its name): 403.
    case quotaExceeded(quota: String, message: String)
    case notFound
    /// The request collides with something that exists or is in progress: 409.
    case conflict(String, retryAfterSeconds: Int? = nil)
    case emailExists
    /// An `Idempotency-Key` sent again with another request: 422.
    case idempotencyKeyReused
    /// A sync token older than the kept history (or of a history this database no longer has): 410.
    case syncTokenExpired
    case rateLimited(retryAfterSeconds: Int)
    /// Too much work queued (password hashing, expensive requests): 503.
    case busy(retryAfterSeconds: Int)
    /// The database cannot serve the request now: 503 with `Retry-After`, whatever the reason.
    case databaseUnavailable(DatabaseOutage)
    /// PostgreSQL refused a statement the client shaped (SQLSTATE classes 22, 23, 42, 54): 400, 403 or 409.
    case rejectedByDatabase(DatabaseRejection)
    /// A bug or an unexpected state: 500, the only failure that is.
    case `internal`

    /// A single invalid field.
    public static func invalid(_ field: String, _ message: String) -> Failure {
        .validation([FieldError(field: field, message: message)])
    }

    public var status: Int {
        switch self {
        case .badRequest, .resetTokenInvalid: 400
        case .unauthorized, .invalidCredentials, .refreshTokenInvalid, .refreshTokenReused: 401
        case .forbidden, .quotaExceeded, .userBanned: 403
        case .notFound: 404
        case .conflict, .emailExists: 409
        case .syncTokenExpired: 410
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .validation, .idempotencyKeyReused: 422
        case .rateLimited: 429
        case .busy, .databaseUnavailable: 503
        case .rejectedByDatabase(let rejection): rejection.status
        case .internal: 500
        }
    }

    /// The contract's stable code (`/v1`'s problem `code`, a sync operation's result `code`).
    public var code: String {
        switch self {
        case .badRequest(let code, _): code
        case .validation: "validation_failed"
        case .unsupportedMediaType: "unsupported_media_type"
        case .payloadTooLarge: "payload_too_large"
        case .unauthorized: "unauthorized"
        case .invalidCredentials: "invalid_credentials"
        case .refreshTokenInvalid: "refresh_token_invalid"
        case .refreshTokenReused: "refresh_token_reused"
        case .userBanned: "user_banned"
        case .resetTokenInvalid: "reset_token_invalid"
        case .forbidden: "forbidden"
        case .quotaExceeded: "quota_exceeded"
        case .notFound: "not_found"
        case .conflict: "conflict"
        case .emailExists: "email_exists"
        case .idempotencyKeyReused: "idempotency_key_reused"
        case .syncTokenExpired: "sync_token_expired"
        case .rateLimited: "rate_limited"
        case .busy, .databaseUnavailable: "service_unavailable"
        case .rejectedByDatabase: "rejected"
        case .internal: "internal"
        }
    }

    /// Seconds to wait before trying again, sent as `Retry-After` on every surface.
    public var retryAfterSeconds: Int? {
        switch self {
        case .rateLimited(let seconds), .busy(let seconds): seconds
        case .conflict(_, let seconds): seconds
        case .databaseUnavailable(let outage): outage.retryAfterSeconds
        default: nil
        }
    }

    /// The fields of a `validation` failure, else none.
    public var fieldErrors: [FieldError] {
        if case .validation(let fields) = self { fields } else { [] }
    }
}

/// Errors of other layers that know which failure they are (the HTTP layer's own, a surface's wire-exact ones).
public protocol FailureConvertible: Error {
    var failure: Failure { get }
}
