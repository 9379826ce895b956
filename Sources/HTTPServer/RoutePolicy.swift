import Failures

/// What a route asks of a request before its handler runs, declared with the route (never chosen by path): who
/// may call it, how large a body it takes, the stages its request passes through and the dialect its failures are
/// answered in. `HTTPServer` applies it, the parts it can before a byte of the body is read. (A route's cost is
/// declared on the route: `Route.cost`.)
public struct RoutePolicy: Sendable {
    public var authentication: Authentication
    /// Larger bodies are refused with `413` from the headers (or while a chunked body is read); declared with
    /// `bodies(upTo:)`.
    public private(set) var bodyLimit: Int = Route.defaultMaxBodySize
    /// What runs around the handler once the body is in, first listed first (see `Stage`); declared with
    /// `staged(_:)` or a surface's group (`Route.grouped(under:)`).
    public private(set) var stages: [Stage]
    public var dialect: any ErrorDialect

    public init(authentication: Authentication = .none, dialect: any ErrorDialect = ProblemJSON(), stages: [Stage] = [])
    {
        self.authentication = authentication
        self.dialect = dialect
        self.stages = stages
    }

    /// No credentials, no stages, problem+json failures: the default of a route declared without a policy.
    public static let open = RoutePolicy()

    /// The body limit of routes that take credentials (sign-up, login, token grants, reset): a login body is a few
    /// hundred bytes. Bodies this small are held within their connection's allowance, never the shared budget
    /// (`HTTPServerConfiguration.connectionBodyAllowance`).
    public static let credentialBodyLimit = 8 * 1024

    public func authenticated(by authentication: Authentication) -> RoutePolicy {
        with { $0.authentication = authentication }
    }
    public func bodies(upTo limit: Int) -> RoutePolicy { with { $0.bodyLimit = limit } }
    /// The same policy with `stages` run after its own.
    public func staged(_ stages: Stage...) -> RoutePolicy { with { $0.stages += stages } }
    /// The same policy with a surface's `stages` run before its own.
    func grouped(under stages: [Stage]) -> RoutePolicy { with { $0.stages = stages + $0.stages } }

    private func with(_ change: (inout RoutePolicy) -> Void) -> RoutePolicy {
        var policy = self
        change(&policy)
        return policy
    }
}

/// How a route checks credentials, in two steps so that each credential is verified once: `verify` reads only
/// the headers (signatures, keys; no database) and runs before the body is read; `resolve`, when there is one,
/// completes the check once the body is in (a session still live) and gives the caller the handler receives
/// as `Request.caller`. A surface declares its own (a console adds an owner's cookie session).
public struct Authentication: Sendable {
    public typealias Verify = @Sendable (Request) throws -> Verified
    public typealias Resolve = @Sendable (Request, Verified) async throws -> any Sendable

    /// For logs and documentation: `none`, `user_token`, `anon_key`, …
    public let name: String
    let verify: Verify
    let resolve: Resolve?

    public init(name: String, verify: @escaping Verify, resolve: Resolve? = nil) {
        self.name = name
        self.verify = verify
        self.resolve = resolve
    }

    /// Anyone; the handler gets no caller.
    public static let none = Authentication(name: "none") { _ in Verified(mayStreamLargeBodies: true) }
}

/// What the headers proved: the caller as far as known without the database, and what it may send.
public struct Verified: Sendable {
    /// The caller handlers get when the authentication has no `resolve` step.
    public var caller: (any Sendable)?
    /// The account a large body is counted against (`HTTPServerConfiguration.bodyBudgetPerAccount`).
    public var account: String?
    /// Whether a body over `HTTPServerConfiguration.smallBodyLimit` (or chunked, to a route that takes more) may be
    /// sent: never on a key anyone has, as uploads are what fill the body budget.
    public var mayStreamLargeBodies: Bool

    public init(caller: (any Sendable)? = nil, account: String? = nil, mayStreamLargeBodies: Bool) {
        self.caller = caller
        self.account = account
        self.mayStreamLargeBodies = mayStreamLargeBodies
    }
}

/// How a surface answers a failure: problem+json on `/v1`, GoTrue's, PostgREST's or Storage's body elsewhere.
/// The status is the failure's; a surface whose clients pin another says so in its renderer.
public protocol ErrorDialect: Sendable {
    /// - Parameter thrown: the error as thrown, for a surface's own wire-exact errors.
    func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response
}
