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

    /// A form another site's page posts (browsers say so in Sec-Fetch-Site) is never ours, even the sign-in, which
    /// has no session to carry a CSRF token yet.
    private static func refuseOtherSitesForms(_ request: Request) throws {
        guard request.method == .post, request.headers["Sec-Fetch-Site"]?.lowercased() == "cross-site" else { return }
        throw Failure.forbidden("The console takes forms from its own pages only. Nothing was changed.")
    }
}
