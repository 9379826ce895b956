import HTTPServer

/// The Supabase-compatible surface on one screen: `/auth/v1` (GoTrue), `/rest/v1` (PostgREST), `/storage/v1` and
/// `/realtime/v1`, each line with method, path, policy (credentials, body limit, stages, dialect; see
/// `SupabasePolicies`), cost and handler. The handlers live in `GoTrueRoutes`, `RestRoutes`/`RestWrites`,
/// `StorageRoutes` and `RealtimeRoutes`.
public enum SupabaseRoutes {
    public static func routes(_ context: SupabaseContext) -> [Route] {
        let policies = SupabasePolicies(context)
        let auth = GoTrueRoutes(context: context)
        let rest = RestRoutes(context: context)
        let storage = StorageRoutes(context: context)
        let realtime = RealtimeRoutes(context: context)

        // GoTrue: the key-only routes take credentials (sign-up, token grants, recovery, verification): small
        // bodies. The mail's link (GET verify) is opened by a browser: no key, a redirect.
        let goTrue = SupabasePolicies.goTrue
        let key = goTrue.authenticated(by: policies.apiKey).bodies(upTo: RoutePolicy.credentialBodyLimit)
            .staged(GoTrueRoutes.apiVersion)
        let caller = goTrue.authenticated(by: policies.caller).staged(GoTrueRoutes.apiVersion)
        // PostgREST: a read or write with a pattern filter, a bulk write, is expensive.
        let table = SupabasePolicies.postgREST.authenticated(by: policies.caller).staged(RestRoutes.publicSchemaOnly)
        let read = RouteCost.upgraded(.cheapRead, expensiveWhen: RestCost.hasExpensiveShape)
        let insert = RouteCost.upgraded(.write, expensiveWhen: RestCost.isBulkOrExpensive)
        let change = RouteCost.upgraded(.write, expensiveWhen: RestCost.hasExpensiveShape)
        // Storage: the `avatars` bucket only.
        let bucket = SupabasePolicies.storage.staged(StorageRoutes.avatarsBucketOnly)
        let object = bucket.authenticated(by: policies.caller)
        let upload = object.bodies(upTo: StorageRoutes.maximumUpload)
        let objectPath = "/storage/v1/object/{bucket}/{path...}"
        return [
            Route(.post, "/auth/v1/signup", key, cost: .auth, handler: .supabase(auth.signUp)),
            Route(.post, "/auth/v1/token", key, cost: .auth, handler: .supabase(auth.token)),
            Route(.get, "/auth/v1/user", caller, cost: .cheapRead, handler: .supabase(auth.user)),
            Route(.put, "/auth/v1/user", caller, cost: .auth, handler: .supabase(auth.updateUser)),
            Route(.get, "/auth/v1/reauthenticate", caller, cost: .auth, handler: .supabase(auth.reauthenticate)),
            Route(.post, "/auth/v1/logout", caller, cost: .write, handler: .supabase(auth.logOut)),
            Route(.post, "/auth/v1/recover", key, cost: .auth, handler: .supabase(auth.recover)),
            Route(.get, "/auth/v1/verify", goTrue, cost: .auth, handler: auth.followLink),
            Route(.post, "/auth/v1/verify", key, cost: .auth, handler: .supabase(auth.verify)),

            Route(.get, "/rest/v1/{table}", table, cost: read, handler: .supabase(rest.read)),
            Route(.post, "/rest/v1/{table}", table, cost: insert, handler: .supabase(rest.insert)),
            Route(.patch, "/rest/v1/{table}", table, cost: change, handler: .supabase(rest.update)),
            Route(.delete, "/rest/v1/{table}", table, cost: change, handler: .supabase(rest.delete)),
            Route(.post, "/rest/v1/rpc/{function}", table, cost: .cheapRead, handler: .supabase(rest.rpc)),

            Route(.post, objectPath, upload, cost: .write, handler: .supabase(storage.upload)),
            Route(.put, objectPath, upload, cost: .write, handler: .supabase(storage.update)),
            Route(.get, objectPath, object, cost: .cheapRead, handler: .supabase(storage.download)),
            Route(
                .get, "/storage/v1/object/public/{bucket}/{path...}", bucket, cost: .cheapRead,
                handler: .supabase(storage.publicDownload)),
            Route(.delete, "/storage/v1/object/{bucket}", object, cost: .write, handler: .supabase(storage.remove)),

            // Realtime: the key comes as `apikey` in the query (a WebSocket cannot set headers); upgraded in place.
            Route(.get, "/realtime/v1/websocket", cost: .cheapRead, handler: realtime.handshake),
        ]
    }
}
