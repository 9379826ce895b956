/// The default service role key: `sb_secret_…`, an HMAC of the JWT key under its own label, so it is as secret
/// as that key (the anon key's label gives a different, unrelated value) and every instance agrees on it.
public enum SupabaseServiceRoleKey {
    public static func derived(fromJWTSecret secret: [UInt8]) -> String {
        let tag = HMACSHA256.authenticationCode(for: Array("quotevault supabase service role key".utf8), key: secret)
        return "sb_secret_" + Base64URL.encode(tag)
    }
}
