import Console
import HTTPServer
import QuoteAPI
import QuoteVault
import SupabaseAPI

/// The surfaces mounted side by side (`/v1` and operations, the Supabase doors, the owners' console), and the
/// stages every surface's requests pass first: the client's address for the services' throttles, then admission by
/// cost class. Each surface lists them on its policies, followed by its own (`Idempotency-Key` on `/v1` writes,
/// the schema on `/rest/v1`, the console's headers and CSRF check). (Credentials and failures are applied by
/// `HTTPServer` from the same policy.)
enum RouteTable {
    static func routes(_ context: AppContext, supabase: SupabaseContext, costs: CostAdmission) -> [Route] {
        let surface = [clientAddress, costs.stage]
        return V1Routes.routes(context, surface: surface)
            + SupabaseRoutes.routes(supabase).map { $0.grouped(under: surface) }
            + consoleRoutes(context, surface: surface)
    }

    /// The owners' console, unless `CONSOLE=off`.
    private static func consoleRoutes(_ context: AppContext, surface: [Stage]) -> [Route] {
        guard context.configuration.consoleEnabled else { return [] }
        let configuration = context.configuration
        var exports = ConsoleExportLimits()
        exports.inAll = configuration.consoleExports
        exports.perOwner = configuration.consoleExportsPerOwner
        exports.stall = .seconds(configuration.consoleExportStallSeconds)
        var console = ConsoleContext(
            pool: context.pool, cursorSecret: configuration.jwtSecret,
            trustedProxies: TrustedProxies(configuration.trustedProxies),
            rateLimits: configuration.rateLimitsEnabled, passwordResets: context.services.accounts,
            exportLimits: exports)
        console.serverStatus = ConsoleStatusSource.status(of: context.metrics)
        return ConsoleMount.routes(console).map { $0.grouped(under: surface) }
    }

    /// The rest of the request runs with `RequestOrigin.clientAddress` bound to its client, so the services'
    /// per-address throttles and the hashing queue's fair share work the same for every surface.
    static let clientAddress = Stage(
        "client_address",
        immediate: { request, _, next in
            try RequestOrigin.$clientAddress.withValue(request.clientAddress) { try next(request) }
        },
        run: { request, _, next in
            try await RequestOrigin.$clientAddress.withValue(request.clientAddress) { try await next(request) }
        })
}
