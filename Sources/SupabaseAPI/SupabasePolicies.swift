import HTTPServer

/// The policies Supabase routes are declared with: who may call (`SupabaseCaller`) and each surface's dialect.
struct SupabasePolicies {
    /// The anon or service role key only (sign-up, token grants, recovery).
    let apiKey: Authentication
    /// The anon key, the service role key, or a user's access token of a live session.
    let caller: Authentication

    init(_ context: SupabaseContext) {
        apiKey = Authentication(name: "anon_key") { try SupabaseCaller.requireKey($0, context: context) }
        caller = Authentication(name: "supabase_caller") {
            try SupabaseCaller.verify($0, context: context)
        } resolve: { _, credentials in
            try await SupabaseCaller.resolve(credentials, context: context)
        }
    }

    static let goTrue = RoutePolicy(dialect: GoTrueDialect()).bodies(upTo: 64 * 1024)
    static let postgREST = RoutePolicy(dialect: PostgRESTDialect())
    static let storage = RoutePolicy(dialect: StorageDialect())
}

extension Handler {
    /// A handler given the request's `SupabaseCaller` (the anonymous role on a route open to anyone).
    static func supabase(_ handler: @escaping @Sendable (Request, SupabaseCaller) async throws -> Response) -> Handler {
        Handler { request in try await handler(request, (request.caller as? SupabaseCaller) ?? .anonymous) }
    }
}
