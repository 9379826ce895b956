import ArgumentParser
import QuoteAPI
import SupabaseAPI

/// Prints the anon key Supabase clients must be configured with (publishable, like Supabase's own anon key):
/// `SUPABASE_ANON_KEY` when set, else the key derived from the JWT key. Starts no database.
struct PrintAnonKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anon-key", abstract: "Print the Supabase anon key clients use with this server and exit.")

    @OptionGroup var options: ServerOptions

    func run() throws {
        if let key = options.value(options.supabaseAnonKey, "SUPABASE_ANON_KEY") {
            print(key)
            return
        }
        let database = Database(url: "", embedded: nil, isEmbedded: options.value(options.databaseURL, "DATABASE_URL") == nil)
        print(SupabaseAnonKey.derived(fromJWTSecret: try database.jwtSecret(options)))
    }
}
