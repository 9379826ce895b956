import AuthJWT
import PGClient
import QuoteVault

/// What the Supabase-compatible surface needs from the application: its keys, the database and the same
/// services `/v1` runs on (so a user, a session or a row is the same whichever API touched it).
public struct SupabaseContext: Sendable {
    /// The publishable key clients send as `apikey`: the anonymous role.
    public let anonKey: String
    /// The secret key of the service role (nil: no service role).
    public let serviceRoleKey: String?
    public let pool: PGPool
    public let signer: JWTSigner
    public let authenticator: Authenticator
    public let accounts: AccountService
    public let profiles: ProfileService
    public let quoteOfTheDay: QuoteOfTheDay
    public let recovery: PasswordRecovery
    /// Where the mail's recovery link points: this server's public base URL (`SUPABASE_PUBLIC_URL`).
    public let publicURL: String
    /// Where a recovery link may send the user (`redirect_to`), and where it does when `redirect_to` is not allowed.
    public let redirects: RedirectAllowList

    public init(
        anonKey: String, serviceRoleKey: String?, pool: PGPool, signer: JWTSigner, authenticator: Authenticator,
        accounts: AccountService,
        profiles: ProfileService, quoteOfTheDay: QuoteOfTheDay, recovery: PasswordRecovery, publicURL: String,
        redirects: RedirectAllowList
    ) {
        self.anonKey = anonKey
        self.serviceRoleKey = serviceRoleKey
        self.pool = pool
        self.signer = signer
        self.authenticator = authenticator
        self.accounts = accounts
        self.profiles = profiles
        self.quoteOfTheDay = quoteOfTheDay
        self.recovery = recovery
        self.publicURL = publicURL
        self.redirects = redirects
    }
}
