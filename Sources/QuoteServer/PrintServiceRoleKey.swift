import ArgumentParser
import QuoteAPI
import AuthJWT

/// Prints the SECRET service role key (Supabase's `service_role`) for the app's owners' tools: row rules do not
/// apply to it on `/rest/v1`. `SUPABASE_SERVICE_ROLE_KEY` when set, else the key derived from the JWT key.
/// Starts no database.
struct PrintServiceRoleKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service-role-key",
        abstract:
            "Print the secret Supabase service role key (bypasses row rules on /rest/v1; keep it out of apps) and exit."
    )

    @OptionGroup var options: ServerOptions

    func run() throws {
        print(
            try options.supabaseKey(
                options.supabaseServiceRoleKey, "SUPABASE_SERVICE_ROLE_KEY", derive: SupabaseServiceRoleKey.derived))
    }
}
