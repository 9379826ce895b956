import Console
import HTTPServer
import QuoteVault
import SupabaseAPI

/// Every route of the server on one screen; each resource's handlers live in their own file.
enum RouteTable {
    static func routes(_ context: AppContext, supabase: SupabaseContext) -> [Route] {
        IdempotentWrites(context: context).wrap(table(context, supabase: supabase))
    }

    private static func table(_ context: AppContext, supabase: SupabaseContext) -> [Route] {
        OperationsRoutes(context: context).routes
            + QuoteRoutes(quotes: context.quotes, search: context.search,
                          answerCacheBytes: context.configuration.answerCacheBytes).routes
            + QuoteOfTheDayRoutes(quoteOfTheDay: context.quoteOfTheDay).routes
            + AuthRoutes(context: context).routes
            + MeRoutes(context: context).routes
            + FavoriteRoutes(context: context, favorites: context.favorites).routes
            + CollectionRoutes(context: context, collections: context.collections).routes
            + SyncRoutes(context: context).routes
            + SupabaseRoutes.routes(supabase)
            + consoleRoutes(context)
    }

    /// The owners' console, unless `CONSOLE=off`.
    private static func consoleRoutes(_ context: AppContext) -> [Route] {
        guard context.configuration.consoleEnabled else { return [] }
        var console = ConsoleContext(
            pool: context.pool, cursorSecret: context.configuration.jwtSecret,
            trustedProxies: TrustedProxies(context.configuration.trustedProxies),
            rateLimits: context.configuration.rateLimitsEnabled)
        console.serverStatus = ConsoleStatusSource.status(of: context.metrics)
        return ConsoleMount.routes(console, logger: context.logger)
    }

    /// Every route's async handler runs with `RequestOrigin.clientAddress` bound to its request's client, so the
    /// services' per-address throttles and the hashing queue's fair share work the same for every API, and is
    /// admitted by its cost class (`CostAdmission`).
    static func bindingOrigin(_ routes: [Route], costs: CostAdmission) -> [Route] {
        routes.map { route in
            let handler = route.handler
            let cost = route.cost
            return route.replacingHandler(Handler(immediate: handler.immediate) { request in
                try await RequestOrigin.$clientAddress.withValue(request.clientAddress) {
                    try await costs.run(cost.of(request), for: request.clientAddress, pattern: route.pattern) {
                        try await handler.deferred(request)
                    }
                }
            })
        }
    }
}
