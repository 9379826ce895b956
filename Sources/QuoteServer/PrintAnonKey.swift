import ArgumentParser
import QuoteAPI
import AuthJWT

/// Prints the anon key Supabase clients must be configured with (publishable, like Supabase's own anon key):
/// `SUPABASE_ANON_KEY` when set, else the key derived from the JWT key. Starts no database.
struct PrintAnonKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anon-key", abstract: "Print the Supabase anon key clients use with this server and exit.")

    @OptionGroup var options: ServerOptions

    func run() throws {
        print(try options.supabaseKey(options.supabaseAnonKey, "SUPABASE_ANON_KEY", derive: SupabaseAnonKey.derived))
    }
}

extension ServerOptions {
    /// A Supabase key: configured (flag or environment), else derived from the JWT key (no database started).
    func supabaseKey(_ flag: String?, _ variable: String, derive: ([UInt8]) -> String) throws -> String {
        if let key = value(flag, variable) { return key }
        let database = Database(url: "", embedded: nil, isEmbedded: value(databaseURL, "DATABASE_URL") == nil)
        return derive(try database.jwtSecret(self))
    }
}
