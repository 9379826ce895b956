import HTTPServer

/// The console's session cookie: `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends
/// it), `Path=/console` (the app's API never sees it), and `Secure` when the browser reached us over https.
enum SessionCookie {
    static let name = "qv_console"

    /// The session token the request carries, if any.
    static func token(in request: Request) -> String? {
        for field in request.headers where field.name.lowercased() == "cookie" {
            for pair in field.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    /// `Set-Cookie` for a new session.
    static func set(_ token: String, secure: Bool) -> String {
        "\(name)=\(token); Path=/console; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// `Set-Cookie` that removes the cookie (sign-out).
    static func clear(secure: Bool) -> String {
        "\(name)=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0" + (secure ? "; Secure" : "")
    }

    /// Whether the browser reached us over https: this server speaks plain HTTP, so only a trusted proxy (one of
    /// `TRUSTED_PROXIES`, which terminated TLS) can say so, with `X-Forwarded-Proto: https`; anyone else's header
    /// is not believed.
    static func isHTTPS(_ request: Request, trustedProxies: TrustedProxies) -> Bool {
        guard trustedProxies.addresses.contains(request.peerAddress) else { return false }
        let proto = request.headers["X-Forwarded-Proto"]?.split(separator: ",").last
        return proto?.trimmingCharacters(in: .whitespaces).lowercased() == "https"
    }
}
