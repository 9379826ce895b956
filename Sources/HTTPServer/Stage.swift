/// A named step a request passes through after its body is read and its credentials are complete, before the
/// route's handler (Hummingbird's `MiddlewareProtocol`): binding the client's address, admission by cost,
/// `Idempotency-Key`, a surface's checks and headers. A route's stages are listed on its policy, first to run
/// first (`RoutePolicy.stages`, a surface's group with `Route.grouped(under:)`), and folded around its handler in
/// one place (`Stage.fold`). A stage that throws is answered in the route's dialect, as a handler is.
///
/// A stage may also give an `immediate` form for a handler's event-thread path (`Handler.immediate`): it must not
/// block, and returns nil to send the request down the async path instead. A route with an immediate handler
/// takes that path only when every one of its stages has an immediate form.
public struct Stage: Sendable {
    public typealias Next = @Sendable (Request) async throws -> Response
    public typealias ImmediateNext = (Request) throws -> Response?
    public typealias Run = @Sendable (Request, Route, @escaping Next) async throws -> Response
    public typealias Immediate = @Sendable (Request, Route, ImmediateNext) throws -> Response?

    /// For logs, documentation and tests: `client_address`, `cost_admission`, `idempotency`, …
    public let name: String
    let run: Run
    let immediate: Immediate?

    /// - Parameters:
    ///   - run: the stage around the rest of the pipeline (`next`: the later stages, then the handler).
    ///   - immediate: the same on the event thread, if the stage can decide without waiting.
    public init(_ name: String, immediate: Immediate? = nil, run: @escaping Run) {
        self.name = name
        self.run = run
        self.immediate = immediate
    }

    /// The route's handler wrapped in its stages, the first declared outermost: what the server runs.
    static func fold(_ stages: [Stage], around handler: Handler, of route: Route) -> Handler {
        var deferred = handler.deferred
        var immediate = handler.immediate
        for stage in stages.reversed() {
            let next = deferred
            deferred = { request in try await stage.run(request, route, next) }
            if let form = stage.immediate, let nextImmediate = immediate {
                immediate = { request in try form(request, route, nextImmediate) }
            } else {
                immediate = nil
            }
        }
        return Handler(immediate: immediate, deferred)
    }
}
