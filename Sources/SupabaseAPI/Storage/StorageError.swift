import HTTPServer
import QuoteVault

/// Supabase Storage's error answer: `{statusCode, error, message}` with `statusCode` a STRING (supabase-swift
/// cannot decode a number there), sent with HTTP 400 as the storage API does for client errors.
struct StorageError: Error {
    var statusCode: String
    var error: String
    var message: String
    var httpStatus = 400
    var retryAfterSeconds: Int? = nil

    static let notFound = StorageError(statusCode: "404", error: "not_found", message: "Object not found")
    static let bucketNotFound = StorageError(statusCode: "404", error: "Bucket not found", message: "Bucket not found")
    static let duplicate = StorageError(statusCode: "409", error: "Duplicate", message: "The resource already exists")
    static let forbidden = StorageError(
        statusCode: "403", error: "Unauthorized", message: "new row violates row-level security policy")

    static let invalidKey = StorageError(
        statusCode: "400", error: "InvalidKey",
        message: "Invalid key: an object name is 1-200 characters without control characters or '/'")

    var response: Response {
        var writer = JSONWriter(capacity: 160)
        writer.raw("{")
        writer.key("statusCode"); writer.string(statusCode); writer.comma()
        writer.key("error"); writer.string(error); writer.comma()
        writer.key("message"); writer.string(message)
        writer.raw("}")
        var response = Response.json(bytes: writer.bytes, status: httpStatus)
        if let retryAfterSeconds { response.headers.set("Retry-After", String(retryAfterSeconds)) }
        return response
    }

    /// Storage's answer for `failure`. Client errors ride HTTP 400 with their status in `statusCode`, as the
    /// storage API sends them; a refusal past a bound (413, 429), an outage (503) and a bug (500) keep their own.
    static func from(_ failure: Failure) -> StorageError {
        var error: StorageError
        switch failure {
        case .unsupportedMediaType(let detail):
            return StorageError(statusCode: "415", error: "invalid_mime_type", message: detail)
        case .notFound: return notFound
        case .payloadTooLarge:
            return StorageError(
                statusCode: "413", error: "Payload too large",
                message: "The object exceeded the maximum allowed size", httpStatus: 413)
        case .forbidden(let message):
            return StorageError(statusCode: "403", error: "Unauthorized", message: message, httpStatus: 403)
        case .rejectedByDatabase(let rejection) where rejection.status == 400:
            let message = "The request was refused: \(rejection.message)"
            return StorageError(statusCode: "400", error: "invalid_request", message: message)
        case .rateLimited:
            let message = "Too many requests; try again later"
            error = StorageError(statusCode: "429", error: "too_many_requests", message: message)
        case .internal:
            return StorageError(statusCode: "500", error: "internal", message: "Internal Server Error", httpStatus: 500)
        default:
            error = StorageError(
                statusCode: String(failure.status), error: failure.code,
                message: ProblemJSON.problem(failure).detail ?? "")
        }
        if failure.status >= 429 { error.httpStatus = failure.status }
        error.retryAfterSeconds = failure.retryAfterSeconds
        return error
    }
}

/// `/storage/v1`'s dialect: `{statusCode, error, message}`.
struct StorageDialect: ErrorDialect {
    func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response {
        switch thrown {
        case let error as StorageError: error.response
        case let refusal as SupabaseCaller.Refusal:
            StorageError(
                statusCode: refusal == .missingKey ? "401" : "403", error: "Unauthorized",
                message: refusal == .expiredToken ? "jwt expired" : "Invalid JWT"
            ).response
        default: StorageError.from(failure).response
        }
    }
}
