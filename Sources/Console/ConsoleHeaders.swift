import HTTPServer

/// The headers of every console answer: a strict Content-Security-Policy (no script at all, styles only from our
/// own stylesheet, no framing, forms only to us), no caching of owner data, no referrer (a sign-in link's token
/// must not leak to anyone).
enum ConsoleHeaders {
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self' data:; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static func apply(to response: inout Response) {
        response.headers.set("Content-Security-Policy", contentSecurityPolicy)
        response.headers.set("X-Frame-Options", "DENY")
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Referrer-Policy", "no-referrer")
    }
}
