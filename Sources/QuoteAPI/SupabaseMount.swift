import QuoteVault
import SupabaseAPI

extension AppContext {
    /// The services the Supabase surface runs on: the same as `/v1`'s. Each access builds a new context (with
    /// throttles of its own), so the application builds it once and hands that one around.
    var supabase: SupabaseContext {
        let sessions = SessionIssuer(
            signer: signer, secret: configuration.jwtSecret, accessTokenTTL: configuration.accessTokenTTL,
            refreshTokenTTL: configuration.refreshTokenTTL,
            refreshTokenReuseInterval: configuration.refreshTokenReuseInterval)
        let recovery = PasswordRecovery(
            pool: pool, hashing: hashing, sessions: sessions, limits: RateLimiter(enabled: configuration.rateLimitsEnabled))
        return SupabaseContext(
            anonKey: configuration.supabaseAnonKey, serviceRoleKey: configuration.supabaseServiceRoleKey, pool: pool, signer: signer,
            authenticator: authenticator, accounts: accounts, profiles: profiles, quoteOfTheDay: quoteOfTheDay, recovery: recovery,
            publicURL: configuration.publicURL,
            redirects: RedirectAllowList(siteURL: configuration.passwordResetURL, prefixes: configuration.supabaseRedirectAllowList),
            logger: logger)
    }
}
