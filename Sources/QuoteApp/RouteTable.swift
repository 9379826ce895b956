import Console
import HTTPServer
import QuoteAPI
import QuoteVault
import SupabaseAPI

/// The surfaces mounted side by side (`/v1` and operations, the Supabase doors, the owners' console), and the
/// stages every route's policy asks for around its handler: the client's address for the services' throttles,
/// admission by cost class, `Idempotency-Key`. (Credentials and failures are applied by `HTTPServer` from the same
/// policy.)
enum RouteTable {
    static func routes(_ context: AppContext, supabase: SupabaseContext, costs: CostAdmission) -> [Route] {
        let routes = V1Routes.routes(context) + SupabaseRoutes.routes(supabase) + consoleRoutes(context)
        return IdempotentWrites(store: context.sync.idempotency).wrap(routes).map { bindingOrigin($0, costs: costs) }
    }

    /// The owners' console, unless `CONSOLE=off`.
    private static func consoleRoutes(_ context: AppContext) -> [Route] {
        guard context.configuration.consoleEnabled else { return [] }
        var console = ConsoleContext(
            pool: context.pool, cursorSecret: context.configuration.jwtSecret,
            trustedProxies: TrustedProxies(context.configuration.trustedProxies),
            rateLimits: context.configuration.rateLimitsEnabled, passwordResets: context.services.accounts)
        console.serverStatus = ConsoleStatusSource.status(of: context.metrics)
        return ConsoleMount.routes(console)
    }

    /// The route's async handler runs with `RequestOrigin.clientAddress` bound to its request's client, so the
    /// services' per-address throttles and the hashing queue's fair share work the same for every surface, and is
    /// admitted by its cost class (`CostAdmission`).
    private static func bindingOrigin(_ route: Route, costs: CostAdmission) -> Route {
        let handler = route.handler
        return route.replacingHandler(
            Handler(immediate: handler.immediate) { request in
                try await RequestOrigin.$clientAddress.withValue(request.clientAddress) {
                    try await costs.run(route, request) { try await handler.deferred(request) }
                }
            })
    }
}
