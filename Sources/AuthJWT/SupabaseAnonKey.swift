/// The default anon key: a publishable key in the `sb_publishable_…` form Supabase uses, derived from the
/// JWT key so that every instance sharing that key also agrees on the anon key without another setting.
public enum SupabaseAnonKey {
    public static func derived(fromJWTSecret secret: [UInt8]) -> String {
        let tag = HMACSHA256.authenticationCode(for: Array("quotevault supabase anon key".utf8), key: secret)
        return "sb_publishable_" + Base64URL.encode(tag.prefix(24))
    }
}
