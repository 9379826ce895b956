/// What a route does with a request.
///
/// Most handlers are `async`: they run as a task while the connection is suspended, so that slow work
/// (database, password hashing) never holds libmicrohttpd's event threads. A handler that can often answer
/// from memory (health, a cached quote of the day) may also give `immediate`, which runs on the event
/// thread and returns `nil` when it has to fall back to the async path. The route's stages run on either path
/// (`Stage`): on the event thread only when each has an immediate form, else the request takes the async path.
public struct Handler: Sendable {
    public typealias Immediate = @Sendable (Request) throws -> Response?
    public typealias Deferred = @Sendable (Request) async throws -> Response

    public let immediate: Immediate?
    public let deferred: Deferred

    public init(immediate: Immediate? = nil, _ deferred: @escaping Deferred) {
        self.immediate = immediate
        self.deferred = deferred
    }

    /// A handler that always answers on the event thread; it must not block.
    public static func immediate(_ body: @escaping @Sendable (Request) throws -> Response) -> Handler {
        Handler(immediate: { try body($0) }, { try body($0) })
    }
}

/// One route: method, a pattern with `{name}` segments, the policy it is served under, what it costs and the
/// handler.
public struct Route: Sendable {
    public let method: HTTPMethod
    public let pattern: String
    public let handler: Handler
    /// What the pipeline checks and applies before the handler (see `RoutePolicy`), its stages included.
    public let policy: RoutePolicy
    /// What serving it costs (see `CostClass`); admission caps requests by it.
    public let cost: RouteCost
    /// `handler` wrapped in the policy's stages (`Stage.fold`): what the server runs.
    private(set) var pipeline: Handler

    /// - Parameters:
    ///   - pattern: literal segments and `{name}` parameters, e.g. `/v1/collections/{id}/quotes/{quote_id}`; a
    ///     last segment `{name...}` takes the rest of the path (one or more segments, none of them `.` or `..`).
    ///   - cost: nil: a cheap read for `GET`, a write otherwise (`RouteCost.byMethod`).
    public init(
        _ method: HTTPMethod, _ pattern: String, _ policy: RoutePolicy = .open, cost: RouteCost? = nil,
        handler: Handler
    ) {
        self.method = method
        self.pattern = pattern
        self.handler = handler
        self.policy = policy
        self.cost = cost ?? .byMethod(method)
        self.pipeline = handler
        self.pipeline = Stage.fold(policy.stages, around: handler, of: self)
    }

    /// The same route in a surface's group (Hummingbird's router groups): `stages` run before its policy's own.
    public func grouped(under stages: [Stage]) -> Route {
        Route(method, pattern, policy.grouped(under: stages), cost: cost, handler: handler)
    }

    /// 1 MiB, the contract's limit for JSON bodies.
    public static let defaultMaxBodySize = 1 << 20
}

/// The outcome of looking a request up.
public enum RouteLookup: Sendable {
    case found(Route, parameters: [String: String])
    case notFound
    case methodNotAllowed(allowed: [HTTPMethod])

    /// The matched route, if any.
    var route: Route? {
        if case .found(let route, _) = self { route } else { nil }
    }
}

/// Matches paths segment by segment in a tree: literal segments win over parameters.
public final class Router: Sendable {
    private final class Node: @unchecked Sendable {
        // Built once in `init`, then only read: safe to share across threads.
        var literals: [Substring: Node] = [:]
        var parameter: (name: String, node: Node)?
        /// `{name...}`: the rest of the path, one or more segments.
        var rest: (name: String, node: Node)?
        var routes: [HTTPMethod: Route] = [:]
    }

    private let root: Node
    /// The nodes of patterns without parameters, by pattern: a request for exactly such a path (`/health`,
    /// `/v1/qotd`) is found with one hash instead of splitting its path. The tree gives the same node.
    private let literalPaths: [String: Node]
    /// Every route, in registration order (for documentation and tests).
    public let routes: [Route]

    /// - Parameter routes: the table of routes. Two routes with the same method and shape are a programming error.
    public init(routes: [Route]) {
        self.routes = routes
        let root = Node()
        var literalPaths: [String: Node] = [:]
        for route in routes {
            var node = root
            for segment in route.pattern.split(separator: "/") {
                if segment.hasPrefix("{") && segment.hasSuffix("...}") {
                    let name = String(segment.dropFirst().dropLast(4))
                    precondition((node.rest?.name ?? name) == name, "conflicting rest parameters in \(route.pattern)")
                    let child = node.rest?.node ?? Node()
                    node.rest = (name, child)
                    node = child
                } else if segment.hasPrefix("{") && segment.hasSuffix("}") {
                    let name = String(segment.dropFirst().dropLast())
                    precondition(
                        (node.parameter?.name ?? name) == name, "conflicting parameter names in \(route.pattern)")
                    let child = node.parameter?.node ?? Node()
                    node.parameter = (name, child)
                    node = child
                } else {
                    let child = node.literals[segment] ?? Node()
                    node.literals[segment] = child
                    node = child
                }
            }
            precondition(node.routes[route.method] == nil, "duplicate route \(route.method) \(route.pattern)")
            node.routes[route.method] = route
            if !route.pattern.contains("{") { literalPaths[route.pattern] = node }
        }
        self.root = root
        self.literalPaths = literalPaths
    }

    /// Finds the route for `method` and `path`. `HEAD` falls back to `GET`.
    public func lookup(method: HTTPMethod, path: String) -> RouteLookup {
        var parameters: [String: String] = [:]
        guard
            let node = literalPaths[path]
                ?? find(path.split(separator: "/", omittingEmptySubsequences: true)[...], from: root, &parameters),
            !node.routes.isEmpty
        else { return .notFound }
        if let route = node.routes[method] ?? (method == .head ? node.routes[.get] : nil) {
            return .found(route, parameters: parameters)
        }
        let order: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete]
        var allowed = order.filter { node.routes[$0] != nil || ($0 == .head && node.routes[.get] != nil) }
        allowed += node.routes.keys.filter { !order.contains($0) }.sorted { $0.rawValue < $1.rawValue }
        return .methodNotAllowed(allowed: allowed)
    }

    private func find(_ segments: ArraySlice<Substring>, from node: Node, _ parameters: inout [String: String]) -> Node?
    {
        guard let segment = segments.first else { return node }
        let rest = segments.dropFirst()
        if let child = node.literals[segment], let found = find(rest, from: child, &parameters), !found.routes.isEmpty {
            return found
        }
        if let (name, child) = node.parameter, let found = find(rest, from: child, &parameters), !found.routes.isEmpty {
            parameters[name] = String(segment)
            return found
        }
        if let (name, child) = node.rest, !child.routes.isEmpty, !segments.contains(where: { $0 == "." || $0 == ".." })
        {
            parameters[name] = segments.joined(separator: "/")
            return child
        }
        return nil
    }
}
