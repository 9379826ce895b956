import Failures
import HTTPServer

/// How the console shows a failure: an HTML page (status, a title, what to do), or, for a page asked for without
/// a session, the way to sign in.
enum ConsoleFailurePage {
    static func response(_ failure: Failure, for request: Request) -> Response {
        if isSignInRequired(failure), request.method == .get || request.method == .head {
            return Response(status: 303, headers: ["Location": "/console/sign-in"])
        }
        let (status, title, message) = describe(failure)
        let body: HTML = """
            <p class="error">\(message)</p>
            <p><a href="/console">Back to the console</a></p>
            """
        var response = ConsolePipeline.html(ConsoleLayout.page(title: title, body: body, request: nil), status)
        if let seconds = failure.retryAfterSeconds { response.headers.set("Retry-After", String(seconds)) }
        return response
    }

    private static func isSignInRequired(_ failure: Failure) -> Bool {
        failure == .unauthorized || failure == .invalidCredentials
    }

    /// "45 seconds", or whole minutes rounded up from two minutes on ("15 minutes").
    static func duration(_ seconds: Int) -> String {
        seconds < 120 ? "\(seconds) seconds" : "\((seconds + 59) / 60) minutes"
    }

    /// The console's statuses are the failure's, except that input it cannot take is a `400` page.
    static func describe(_ failure: Failure) -> (status: Int, title: String, message: String) {
        switch failure {
        case .unauthorized, .invalidCredentials:
            return (401, "Sign-in required", "Sign in with the link `quote-server owner add` prints.")
        case .forbidden(let message): return (403, "Refused", message)
        case .notFound: return (404, "Not found", "There is no such page or item.")
        case .badRequest(_, let message), .unsupportedMediaType(let message): return (400, "Invalid input", message)
        case .validation(let fields):
            return (400, "Invalid input", fields.map { "\($0.field) \($0.message)" }.joined(separator: "; "))
        case .conflict(let message, _): return (409, "Cannot do that", message)
        case .payloadTooLarge: return (413, "Too large", "The upload is larger than the console accepts.")
        case .rateLimited(let seconds):
            return (429, "Too many attempts", "Too many attempts; try again in \(duration(seconds)).")
        case .busy(let seconds):
            return (503, "Unavailable", "The server is busy; try again in \(seconds) seconds.")
        case .databaseUnavailable(let outage):
            return (
                503, "Unavailable",
                "The database cannot answer right now; try again in \(outage.retryAfterSeconds) seconds."
            )
        default:
            if failure.status < 500 { return (failure.status, "Refused", "The request was refused (\(failure.code)).") }
            return (500, "Something went wrong", "The server failed; nothing more is shown here.")
        }
    }
}
