import HTTPServer
import QuoteVault
import SupabaseAPI

/// Every route of the server on one screen; each resource's handlers live in their own file.
enum RouteTable {
    static func routes(_ context: AppContext) -> [Route] {
        IdempotentWrites(context: context).wrap(table(context))
    }

    private static func table(_ context: AppContext) -> [Route] {
        OperationsRoutes(context: context).routes
            + QuoteRoutes(quotes: context.quotes, search: context.search,
                          searchesPerAddress: context.configuration.rateLimitsEnabled ? 2 : nil,
                          answerCacheBytes: context.configuration.answerCacheBytes).routes
            + QuoteOfTheDayRoutes(quoteOfTheDay: context.quoteOfTheDay).routes
            + AuthRoutes(context: context).routes
            + MeRoutes(context: context).routes
            + FavoriteRoutes(context: context, favorites: context.favorites).routes
            + CollectionRoutes(context: context, collections: context.collections).routes
            + SyncRoutes(context: context).routes
            + SupabaseRoutes.routes(context.supabase)
    }

    /// Every route's async handler runs with `RequestOrigin.clientAddress` bound to its request's client, so the
    /// services' per-address throttles and the hashing queue's fair share work the same for every API.
    static func bindingOrigin(_ routes: [Route]) -> [Route] {
        routes.map { route in
            let handler = route.handler
            return Route(route.method, route.pattern, maxBodySize: route.maxBodySize, handler: Handler(immediate: handler.immediate) { request in
                try await RequestOrigin.$clientAddress.withValue(request.clientAddress) { try await handler.deferred(request) }
            })
        }
    }
}
