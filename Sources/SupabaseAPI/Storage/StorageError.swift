import HTTPServer
import Logging
import PGClient
import QuoteVault

/// Supabase Storage's error answer: `{statusCode, error, message}` with `statusCode` a STRING (supabase-swift
/// cannot decode a number there), sent with HTTP 400 as the storage API does for client errors.
struct StorageError: Error {
    var statusCode: String
    var error: String
    var message: String
    var httpStatus = 400

    static let notFound = StorageError(statusCode: "404", error: "not_found", message: "Object not found")
    static let bucketNotFound = StorageError(statusCode: "404", error: "Bucket not found", message: "Bucket not found")
    static let duplicate = StorageError(statusCode: "409", error: "Duplicate", message: "The resource already exists")
    static let forbidden = StorageError(
        statusCode: "403", error: "Unauthorized", message: "new row violates row-level security policy")

    static func invalidKey(_ path: String) -> StorageError {
        StorageError(statusCode: "400", error: "InvalidKey",
                     message: "Invalid key: an object name is 1-200 characters without control characters or '/'")
    }

    var response: Response {
        var writer = JSONWriter(capacity: 160)
        writer.raw("{")
        writer.key("statusCode"); writer.string(statusCode); writer.comma()
        writer.key("error"); writer.string(error); writer.comma()
        writer.key("message"); writer.string(message)
        writer.raw("}")
        return .json(bytes: writer.bytes, status: httpStatus)
    }

    static func answer(for error: any Error, logger: Logger) -> Response {
        if let outage = DatabaseUnavailable(error) { return unavailable(outage) }
        switch error {
        case let error as StorageError:
            return error.response
        case let refusal as SupabaseCaller.Refusal:
            return StorageError(statusCode: refusal == .missingKey ? "401" : "403", error: "Unauthorized",
                                message: refusal == .expiredToken ? "jwt expired" : "Invalid JWT", httpStatus: 400).response
        case QuoteVaultError.unsupportedMediaType(let detail):
            return StorageError(statusCode: "415", error: "invalid_mime_type", message: detail).response
        case QuoteVaultError.notFound:
            return notFound.response
        case let error as HTTPError where error.status == 413:
            return StorageError(statusCode: "413", error: "Payload too large", message: "The object exceeded the maximum allowed size",
                                httpStatus: 413).response
        case let error as HTTPError where error.status == 429 || error.status == 503:
            // A refusal under load keeps its status and Retry-After whichever door it came through.
            var response = StorageError(statusCode: String(error.status), error: error.code,
                                        message: error.detail ?? error.title, httpStatus: error.status).response
            for (name, value) in error.headers { response.headers.set(name, value) }
            return response
        case let error as HTTPError:
            return StorageError(statusCode: String(error.status), error: error.code, message: error.detail ?? error.title).response
        case QuoteVaultError.rateLimited(let seconds):
            var response = StorageError(statusCode: "429", error: "too_many_requests",
                                        message: "Too many requests; try again later", httpStatus: 429).response
            response.headers.set("Retry-After", String(seconds))
            return response
        case QuoteVaultError.busy(let seconds):
            var response = StorageError(statusCode: "503", error: "service_unavailable",
                                        message: "The server is busy; try again shortly", httpStatus: 503).response
            response.headers.set("Retry-After", String(seconds))
            return response
        case let error as PGError where error.sqlState.map({ ["22", "23"].contains($0.rawValue.prefix(2)) }) ?? false:
            return StorageError(statusCode: "400", error: "invalid_request", message: "The request was refused: \(error.message)").response
        default:
            logger.error("storage request failed", metadata: ["error": "\(error)"])
            return StorageError(statusCode: "500", error: "internal", message: "Internal Server Error", httpStatus: 500).response
        }
    }

    /// The database cannot serve the request now (`DatabaseUnavailable`): 503, as on every surface.
    static func unavailable(_ outage: DatabaseUnavailable) -> Response {
        var response = StorageError(statusCode: "503", error: "service_unavailable", message: outage.message,
                                    httpStatus: 503).response
        response.headers.set(outage.retryAfterHeader.name, outage.retryAfterHeader.value)
        return response
    }
}
