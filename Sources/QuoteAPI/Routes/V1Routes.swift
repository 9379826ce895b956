import HTTPServer

/// The `/v1` surface and the operations routes on one screen; each resource's handlers live in their own file.
public enum V1Routes {
    public static func routes(_ context: AppContext) -> [Route] {
        let resources =
            QuoteRoutes(
                quotes: context.quotes, search: context.search,
                answerCacheBytes: context.configuration.answerCacheBytes
            ).routes
            + QuoteOfTheDayRoutes(quoteOfTheDay: context.quoteOfTheDay).routes
            + AuthRoutes(context: context).routes
            + MeRoutes(context: context).routes
            + FavoriteRoutes(context: context, favorites: context.favorites).routes
            + CollectionRoutes(context: context, collections: context.collections).routes
            + SyncRoutes(context: context).routes
        return OperationsRoutes(context: context, openAPI: .json(bytes: OpenAPIDocument.bytes(routes: resources)))
            .routes
            + resources
    }
}
