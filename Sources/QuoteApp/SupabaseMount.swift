import QuoteAPI
import QuoteVault
import SupabaseAPI

extension SupabaseContext {
    /// The Supabase surface on the same services as `/v1` (one set, built once by `Application.build`): a user, a
    /// session or a row is the same whichever door touched it.
    init(sharing context: AppContext, sessions: SessionIssuer) {
        let configuration = context.configuration
        let recovery = PasswordRecovery(
            pool: context.pool, hashing: context.hashing, sessions: sessions,
            limits: RateLimiter(enabled: configuration.rateLimitsEnabled))
        self.init(
            anonKey: configuration.supabaseAnonKey, serviceRoleKey: configuration.supabaseServiceRoleKey,
            pool: context.pool, signer: context.signer, authenticator: context.authenticator,
            accounts: context.accounts, profiles: context.profiles, quoteOfTheDay: context.quoteOfTheDay,
            recovery: recovery, publicURL: configuration.publicURL,
            redirects: RedirectAllowList(
                siteURL: configuration.passwordResetURL, prefixes: configuration.supabaseRedirectAllowList))
    }
}
