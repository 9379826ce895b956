import Logging
import QuoteVault

/// What the Supabase-compatible surface needs from the application: its keys and the same services `/v1` runs on
/// (so a user, a session or a row is the same whichever API touched it); `context.accounts` is
/// `context.services.accounts`.
@dynamicMemberLookup
public struct SupabaseContext: Sendable {
    /// The publishable key clients send as `apikey`: the anonymous role.
    public let anonKey: String
    /// The secret key of the service role (nil: no service role).
    public let serviceRoleKey: String?
    public let services: Services
    /// Where the mail's recovery link points: this server's public base URL (`SUPABASE_PUBLIC_URL`).
    public let publicURL: String
    /// Where a recovery link may send the user (`redirect_to`), and where it does when `redirect_to` is not allowed.
    public let redirects: RedirectAllowList
    /// The Realtime sockets of this instance (`/realtime/v1/websocket`); `start` it with the database's URL.
    public let realtime: RealtimeHub

    public init(
        anonKey: String, serviceRoleKey: String?, services: Services, publicURL: String, redirects: RedirectAllowList,
        realtimeLimits: RealtimeLimits = RealtimeLimits(), logger: Logger = Logger(label: "realtime")
    ) {
        self.realtime = RealtimeHub(
            limits: realtimeLimits,
            keys: RealtimeKeys(anonKey: anonKey, serviceRoleKey: serviceRoleKey, signer: services.signer),
            authenticator: services.authenticator, pool: services.pool, logger: logger)
        self.anonKey = anonKey
        self.serviceRoleKey = serviceRoleKey
        self.services = services
        self.publicURL = publicURL
        self.redirects = redirects
    }

    @inlinable public subscript<Value>(dynamicMember keyPath: KeyPath<Services, Value>) -> Value {
        services[keyPath: keyPath]
    }
}
