import HTTPServer
import QuoteVault

/// The `/v1` surface and the operations routes on one screen: method, path, policy (credentials, body limit,
/// stages; see `V1Policies`), cost, handler. Each resource's handlers live in their own file.
public enum V1Routes {
    /// - Parameter surface: the stages every request of the surface passes first (`V1Policies.public`).
    public static func routes(_ context: AppContext, surface: [Stage]) -> [Route] {
        let policies = V1Policies(context, surface: surface)
        let (anyone, signIn, user, userWrite) = (policies.public, policies.signIn, policies.user, policies.userWrite)
        let avatarUpload = userWrite.bodies(upTo: ProfileService.maximumAvatarBytes)
        let quotes = QuoteRoutes(
            quotes: context.quotes, search: context.search, answerCacheBytes: context.configuration.answerCacheBytes)
        let qotd = QuoteOfTheDayRoutes(quoteOfTheDay: context.quoteOfTheDay)
        let auth = AuthRoutes(context: context)
        let me = MeRoutes(context: context)
        let favorites = FavoriteRoutes(context: context, favorites: context.favorites)
        let collections = CollectionRoutes(context: context, collections: context.collections)
        let sync = SyncRoutes(context: context)
        // Offset pages and searches are answered from memory while no quote changed; a search is expensive unless
        // its answer is likely cached. A sync batch of more than about a hundred operations is a bulk write.
        let (pages, searches) = (anyone.staged(quotes.pageAnswers), anyone.staged(quotes.searchAnswers))
        let search = RouteCost.upgraded(.cheapRead, expensiveWhen: quotes.isLikelyUncached)
        let batch = RouteCost.upgraded(.write, expensiveWhen: { $0.body.count > 16 << 10 })
        let resources = [
            Route(.get, "/v1/quotes", pages, cost: .cheapRead, handler: Handler(quotes.list)),
            Route(.get, "/v1/quotes/search", searches, cost: search, handler: Handler(quotes.find)),
            Route(.get, "/v1/quotes/{id}", anyone, cost: .cheapRead, handler: Handler(quotes.one)),
            Route(.get, "/v1/categories", anyone, cost: .cheapRead, handler: Handler(quotes.categories)),
            Route(.get, "/v1/qotd", anyone, cost: .cheapRead, handler: Handler(immediate: qotd.cached, qotd.single)),
            Route(.get, "/v1/qotd/range", anyone, cost: .cheapRead, handler: Handler(qotd.range)),

            Route(.post, "/v1/auth/signup", signIn, cost: .auth, handler: Handler(auth.signUp)),
            Route(.post, "/v1/auth/login", signIn, cost: .auth, handler: Handler(auth.logIn)),
            Route(.post, "/v1/auth/refresh", signIn, cost: .auth, handler: Handler(auth.refresh)),
            Route(.post, "/v1/auth/logout", userWrite, cost: .write, handler: Handler(auth.logOut)),
            Route(.post, "/v1/auth/password-reset", signIn, cost: .auth, handler: Handler(auth.requestReset)),
            Route(.post, "/v1/auth/password-reset/confirm", signIn, cost: .auth, handler: Handler(auth.confirmReset)),

            Route(.get, "/v1/me", user, cost: .cheapRead, handler: Handler(me.me)),
            Route(.get, "/v1/me/export", user, cost: .expensive, handler: Handler(me.export)),
            Route(.patch, "/v1/me", userWrite, cost: .write, handler: Handler(me.update)),
            Route(.delete, "/v1/me", userWrite, cost: .auth, handler: Handler(me.deleteAccount)),
            Route(.put, "/v1/me/avatar", avatarUpload, cost: .write, handler: Handler(me.putAvatar)),
            Route(.delete, "/v1/me/avatar", userWrite, cost: .write, handler: Handler(me.deleteAvatar)),
            Route(.get, "/v1/avatars/{user_id}", anyone, cost: .cheapRead, handler: Handler(me.avatar)),

            Route(.get, "/v1/favorites", user, cost: .cheapRead, handler: Handler(favorites.list)),
            Route(.get, "/v1/favorites/ids", user, cost: .cheapRead, handler: Handler(favorites.ids)),
            Route(.put, "/v1/favorites/{quote_id}", userWrite, cost: .write, handler: Handler(favorites.add)),
            Route(.delete, "/v1/favorites/{quote_id}", userWrite, cost: .write, handler: Handler(favorites.remove)),

            Route(.get, "/v1/collections", user, cost: .cheapRead, handler: Handler(collections.list)),
            Route(.post, "/v1/collections", userWrite, cost: .write, handler: Handler(collections.create)),
            Route(.patch, "/v1/collections/{id}", userWrite, cost: .write, handler: Handler(collections.rename)),
            Route(.delete, "/v1/collections/{id}", userWrite, cost: .write, handler: Handler(collections.delete)),
            Route(.get, "/v1/collections/{id}/quotes", user, cost: .cheapRead, handler: Handler(collections.quotes)),
            Route(
                .put, "/v1/collections/{id}/quotes/{quote_id}", userWrite, cost: .write,
                handler: Handler(collections.addQuote)),
            Route(
                .delete, "/v1/collections/{id}/quotes/{quote_id}", userWrite, cost: .write,
                handler: Handler(collections.removeQuote)),

            Route(.get, "/v1/sync", user, cost: .cheapRead, handler: Handler(sync.changes)),
            Route(.get, "/v1/sync/events", user, cost: .cheapRead, handler: Handler(sync.events)),
            Route(.post, "/v1/sync", userWrite, cost: batch, handler: Handler(sync.applyBatch)),
        ]
        let operations = OperationsRoutes(
            context: context, openAPI: .json(bytes: OpenAPIDocument.bytes(routes: resources)))
        let probe = V1Policies.probe
        return [
            Route(.get, "/health", probe, cost: .cheapRead, handler: .immediate(operations.health)),
            Route(.get, "/ready", anyone, cost: .cheapRead, handler: Handler(operations.ready)),
            Route(.get, "/openapi.json", probe, cost: .cheapRead, handler: .immediate(operations.document)),
            Route(.get, "/metrics", probe, cost: .cheapRead, handler: .immediate(operations.scrape)),
        ] + resources
    }
}
