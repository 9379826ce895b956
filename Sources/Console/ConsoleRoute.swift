import Failures
import HTTPServer

/// One console route as declared in `ConsoleRouteTable`: `page` (an owner's GET), `action` (an owner's form post,
/// CSRF-checked), `open` (anyone). Each is an ordinary `Route` on the server's pipeline once the mount gives it the
/// console's context: its `RoutePolicy` carries the authentication (`ConsoleAuthentication`), the body limit, the
/// console's stages (`ConsolePipeline`) and its error dialect (`ConsoleDialect`), the route its cost class; the
/// handler only does its work.
struct ConsoleRoute: Sendable {
    typealias Handler = @Sendable (ConsoleRequest) async throws -> ConsoleAnswer

    private let build: @Sendable (ConsoleContext) -> Route

    /// Form bodies are small; uploads declare more.
    static let formBodyLimit = 64 * 1024

    /// The route served with `context`.
    func route(_ context: ConsoleContext) -> Route { build(context) }

    /// `bodyLimit` nil: none for a GET, a form's for anything else.
    private init(
        _ method: HTTPMethod, _ pattern: String, owner: Bool, csrf: Bool, bodyLimit: Int? = nil,
        cost: RouteCost? = nil, handler: @escaping Handler
    ) {
        let bodyLimit = bodyLimit ?? (method == .get ? 0 : Self.formBodyLimit)
        build = { context in
            let authentication = owner ? ConsoleAuthentication.owner(context.sessions) : ConsoleAuthentication.visitor
            let stages =
                csrf ? [ConsolePipeline.securityHeaders, ConsolePipeline.csrf] : [ConsolePipeline.securityHeaders]
            let policy = RoutePolicy(authentication: authentication, dialect: ConsoleDialect(), stages: stages)
                .bodies(upTo: bodyLimit)
            return Route(
                method, pattern, policy, cost: cost, handler: ConsolePipeline.handler(handler, context: context))
        }
    }

    /// A page an owner reads (GET): a session, no CSRF token.
    static func page(_ pattern: String, cost: RouteCost? = nil, _ handler: @escaping Handler) -> ConsoleRoute {
        ConsoleRoute(.get, pattern, owner: true, csrf: false, cost: cost, handler: handler)
    }

    /// A form an owner posts: a session and its CSRF token.
    static func action(
        _ pattern: String, bodyLimit: Int = formBodyLimit, cost: RouteCost? = nil, _ handler: @escaping Handler
    ) -> ConsoleRoute {
        ConsoleRoute(.post, pattern, owner: true, csrf: true, bodyLimit: bodyLimit, cost: cost, handler: handler)
    }

    /// A route anyone may call (no session, no CSRF token).
    static func open(_ method: HTTPMethod, _ pattern: String, cost: RouteCost? = nil, _ handler: @escaping Handler)
        -> ConsoleRoute
    {
        ConsoleRoute(method, pattern, owner: false, csrf: false, cost: cost, handler: handler)
    }

    /// Every other path under /console, for owners: the console's not-found page (with the console's headers).
    static func unknown(_ method: HTTPMethod) -> ConsoleRoute {
        ConsoleRoute(method, "/console/{path...}", owner: true, csrf: false) { _ in throw Failure.notFound }
    }
}
