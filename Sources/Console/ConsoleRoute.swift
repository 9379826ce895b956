import HTTPServer

/// One console route and the policies it declares; `ConsolePipeline` applies them, the handler only does its work.
/// (The shape of issue 27's route declarations: authentication, CSRF, body limit, cost; the error dialect is the
/// console's HTML pages for every route.)
struct ConsoleRoute: Sendable {
    /// Who may call it.
    enum Access: Sendable {
        /// Anyone: sign-in, the stylesheet, the not-found page.
        case anyone
        /// An owner with a live session cookie; anyone else is sent to sign in.
        case owner
    }

    typealias Handler = @Sendable (ConsoleRequest) async throws -> ConsoleAnswer

    let method: HTTPMethod
    let pattern: String
    let access: Access
    /// Whether the request must carry the session's CSRF token (every state-changing owner request does).
    let csrf: Bool
    let bodyLimit: Int
    let cost: RouteCost?
    let handler: Handler

    /// Form bodies are small; uploads declare more.
    static let formBodyLimit = 64 * 1024

    /// A page an owner reads (GET): a session, no CSRF token.
    static func page(_ pattern: String, cost: RouteCost? = nil, _ handler: @escaping Handler) -> ConsoleRoute {
        ConsoleRoute(method: .get, pattern: pattern, access: .owner, csrf: false, bodyLimit: 0, cost: cost,
                     handler: handler)
    }

    /// A form an owner posts: a session and its CSRF token.
    static func action(
        _ pattern: String, bodyLimit: Int = formBodyLimit, cost: RouteCost? = nil, _ handler: @escaping Handler
    ) -> ConsoleRoute {
        ConsoleRoute(method: .post, pattern: pattern, access: .owner, csrf: true, bodyLimit: bodyLimit, cost: cost,
                     handler: handler)
    }

    /// A route anyone may call (no session, no CSRF token).
    static func open(_ method: HTTPMethod, _ pattern: String, cost: RouteCost? = nil, _ handler: @escaping Handler)
        -> ConsoleRoute
    {
        ConsoleRoute(method: method, pattern: pattern, access: .anyone, csrf: false,
                     bodyLimit: method == .get ? 0 : formBodyLimit, cost: cost, handler: handler)
    }

    /// Every other path under /console, for owners: the console's not-found page (with the console's headers).
    static func unknown(_ method: HTTPMethod) -> ConsoleRoute {
        ConsoleRoute(method: method, pattern: "/console/{path...}", access: .owner, csrf: false,
                     bodyLimit: method == .get ? 0 : formBodyLimit, cost: nil) { _ in throw ConsoleFailure.notFound }
    }
}
