import Foundation
import AuthJWT
import HTTPServer
import QuoteVault

/// Who may call a console route, checked by the server's pipeline like any surface's credentials: from the
/// headers before the body (no database), then the owner's session once the body is in.
enum ConsoleAuthentication {
    /// Anyone (sign-in, the stylesheet); a form must still come from the console's own pages.
    static let visitor = Authentication(name: "console_visitor") { request in
        try refuseOtherSitesForms(request)
        return Verified(mayStreamLargeBodies: false)
    }

    /// An owner with a live session: a request without a well-formed session cookie is refused before its body
    /// is read (nobody makes the server buffer an 8 MiB upload without one); the session is then loaded once and is
    /// the request's caller (an `OwnerSession`).
    static func owner(_ sessions: OwnerSessions) -> Authentication {
        Authentication(
            name: "console_owner",
            verify: { request in
                guard let token = SessionCookie.token(in: request), OpaqueToken.isWellFormed(token) else {
                    throw Failure.unauthorized
                }
                try refuseOtherSitesForms(request)
                return Verified(mayStreamLargeBodies: true)
            },
            resolve: { request, _ in
                guard let token = SessionCookie.token(in: request), let live = try await sessions.resume(token) else {
                    throw Failure.unauthorized
                }
                return live
            })
    }

    /// A form another origin's page posts is never ours, even the sign-in, which has no session to carry a CSRF
    /// token yet. Browsers say where a form comes from: `Sec-Fetch-Site` (`same-site` is another port or
    /// subdomain of our host, which is no more ours than another site) and `Origin`, which must be this host.
    ///
    /// `Sec-Fetch-Site: same-origin` settles it: browsers set it and no page can, and under the console's
    /// `Referrer-Policy: no-referrer` a browser sends `Origin: null` with its own pages' forms.
    private static func refuseOtherSitesForms(_ request: Request) throws {
        guard request.method == .post else { return }
        let site = request.headers["Sec-Fetch-Site"]?.lowercased()
        if site == "same-origin" { return }
        let foreignSite = site == "cross-site" || site == "same-site"
        if foreignSite || !isOwnOrigin(request) {
            throw Failure.forbidden("The console takes forms from its own pages only. Nothing was changed.")
        }
    }

    /// No `Origin` (an older browser, a script) passes; one that names another scheme-less host:port, or `null`
    /// (a sandboxed or privacy-sensitive context), does not.
    private static func isOwnOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers["Origin"]?.trimmingCharacters(in: .whitespaces).lowercased() else {
            return true
        }
        guard let host = request.headers["Host"]?.lowercased(), let separator = origin.range(of: "://") else {
            return false
        }
        return origin[separator.upperBound...] == host[...]
    }
}
