import HTTPServer
import PGClient
import QuoteVault

/// Every way a console request fails, closed: handlers and services throw, `ConsoleFailurePage` renders it.
enum ConsoleFailure: Error, Sendable, Equatable {
    /// No live owner session: a page redirects to sign-in, a form post is refused.
    case signInRequired
    /// A state-changing request without the session's CSRF token.
    case forbidden(String)
    case notFound
    /// Input the page cannot take (a form page re-renders itself with the message instead).
    case invalid(String)
    case conflict(String)
    case payloadTooLarge
    case rateLimited(retryAfterSeconds: Int)
    /// The database cannot serve right now, or work is queued.
    case unavailable(retryAfterSeconds: Int)
    /// A bug: nothing about it is shown.
    case internalError

    /// The failure an error thrown by a handler or a service is.
    init(_ error: any Error) {
        switch error {
        case let failure as ConsoleFailure: self = failure
        case let error as QuoteVaultError: self = Self.from(error)
        case let error as ConflictError: self = .conflict(error.detail)
        case let error as HTTPError where error.status == 413: self = .payloadTooLarge
        case let error as HTTPError where (400..<500).contains(error.status):
            self = .invalid(error.detail ?? error.title)
        default:
            if let unavailable = DatabaseUnavailable(error) {
                self = .unavailable(retryAfterSeconds: unavailable.retryAfterSeconds)
            } else {
                self = .internalError
            }
        }
    }

    private static func from(_ error: QuoteVaultError) -> ConsoleFailure {
        switch error {
        case .validation(let fields):
            return .invalid(fields.map { "\($0.field) \($0.message)" }.joined(separator: "; "))
        case .notFound: return .notFound
        case .rateLimited(let seconds): return .rateLimited(retryAfterSeconds: seconds)
        case .busy(let seconds): return .unavailable(retryAfterSeconds: seconds)
        case .unauthorized, .invalidCredentials: return .signInRequired
        case .unsupportedMediaType(let detail): return .invalid(detail)
        default: return .internalError
        }
    }
}
