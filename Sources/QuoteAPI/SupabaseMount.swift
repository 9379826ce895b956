import SupabaseAPI

extension AppContext {
    /// The services the Supabase surface runs on: the same as `/v1`'s.
    var supabase: SupabaseContext {
        SupabaseContext(
            anonKey: configuration.supabaseAnonKey, serviceRoleKey: configuration.supabaseServiceRoleKey, pool: pool, signer: signer, authenticator: authenticator,
            accounts: accounts, profiles: profiles, quoteOfTheDay: quoteOfTheDay, logger: logger)
    }
}
