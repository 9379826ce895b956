import Foundation
import Failures

/// An error that knows its HTTP status and stable `code`; rendered once, as RFC 9457 problem+json.
/// Internal causes are never part of it: log them where they happen.
public struct HTTPError: Error, Sendable, Equatable {
    public typealias FieldError = Failures.FieldError

    public var status: Int
    public var code: String
    public var title: String
    public var detail: String?
    public var errors: [FieldError]
    /// Extra response headers, e.g. `Retry-After` or `Allow`.
    public var headers: [String: String]

    public init(
        status: Int, code: String, title: String, detail: String? = nil, errors: [FieldError] = [],
        headers: [String: String] = [:]
    ) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    // The problems of the HTTP layer's own failures, as `ProblemJSON` renders them.
    public static func invalidJSON(_ detail: String = "The body is not valid JSON") -> HTTPError {
        ProblemJSON.problem(.badRequest(code: "invalid_json", detail: detail))
    }
    public static func validation(_ errors: [FieldError]) -> HTTPError { ProblemJSON.problem(.validation(errors)) }
    public static func validation(field: String, _ message: String) -> HTTPError {
        ProblemJSON.problem(.invalid(field, message))
    }
    public static func badRequest(_ detail: String) -> HTTPError {
        ProblemJSON.problem(.badRequest(code: "bad_request", detail: detail))
    }
    public static func notFound(_ detail: String = "Not found") -> HTTPError {
        HTTPError(status: 404, code: "not_found", title: "Not found", detail: detail)
    }
    public static func methodNotAllowed(allowed: [HTTPMethod]) -> HTTPError {
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        return HTTPError(
            status: 405, code: "method_not_allowed", title: "Method not allowed",
            detail: "Allowed: \(allow)", headers: ["Allow": allow])
    }
    public static func unsupportedMediaType(_ detail: String = "Expected application/json") -> HTTPError {
        ProblemJSON.problem(.unsupportedMediaType(detail))
    }
    public static func unauthorized() -> HTTPError { ProblemJSON.problem(.unauthorized) }
    public static func serviceUnavailable(_ detail: String) -> HTTPError {
        HTTPError(
            status: 503, code: "service_unavailable", title: "Service unavailable", detail: detail,
            headers: ["Retry-After": "1"])
    }

    /// The problem+json response for this error.
    public var response: Response {
        struct Body: Encodable {
            let status: Int, code: String, title: String, detail: String?, errors: [FieldError]?
        }
        let body = Body(status: status, code: code, title: title, detail: detail, errors: errors.isEmpty ? nil : errors)
        var response = Response(status: status, body: (try? JSONCoding.encode(body)) ?? [])
        response.headers.set("Content-Type", "application/problem+json")
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { response.headers.set(name, value) }
        return response
    }
}
