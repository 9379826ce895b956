import HTTPServer

/// The console's error dialect: every failure as an HTML page (status, a title, what to do), in one place.
enum ConsoleFailurePage {
    static func response(_ failure: ConsoleFailure, for request: Request) -> Response {
        if failure == .signInRequired, request.method == .get || request.method == .head {
            return Response(status: 303, headers: ["Location": "/console/sign-in"])
        }
        let (status, title, message) = describe(failure)
        let body: HTML = """
            <p class="error">\(message)</p>
            <p><a href="/console">Back to the console</a></p>
            """
        var response = ConsolePipeline.html(ConsoleLayout.page(title: title, body: body, request: nil), status)
        switch failure {
        case .rateLimited(let seconds), .unavailable(let seconds):
            response.headers.set("Retry-After", String(seconds))
        default: break
        }
        return response
    }

    static func describe(_ failure: ConsoleFailure) -> (status: Int, title: String, message: String) {
        switch failure {
        case .signInRequired: return (401, "Sign-in required", "Sign in with the link `quote-server owner add` prints.")
        case .forbidden(let message): return (403, "Refused", message)
        case .notFound: return (404, "Not found", "There is no such page or item.")
        case .invalid(let message): return (400, "Invalid input", message)
        case .conflict(let message): return (409, "Cannot do that", message)
        case .payloadTooLarge: return (413, "Too large", "The upload is larger than the console accepts.")
        case .rateLimited(let seconds):
            return (429, "Too many attempts", "Too many attempts; try again in \(seconds) seconds.")
        case .unavailable(let seconds):
            return (503, "Unavailable", "The database cannot answer right now; try again in \(seconds) seconds.")
        case .internalError: return (500, "Something went wrong", "The server failed; nothing more is shown here.")
        }
    }
}
