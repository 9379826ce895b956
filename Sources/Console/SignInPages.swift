import QuoteVault

/// Signing in with the one-time link `quote-server owner add` prints, and signing out.
///
/// Opening the link shows a button (and the code field once a second factor is enrolled); the POST spends the
/// link. A GET never spends it, so a mail scanner or a link preview that fetches the URL cannot use it up.
enum SignInPages {
    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        guard let token = request.query("token"), !token.isEmpty else {
            return .bare(
                title: "Sign in",
                body: """
                    <p>Owners sign in with a one-time link. On the server, run
                    <code>quote-server owner add you@example.com</code> and open the link it prints.</p>
                    """)
        }
        guard let owner = try await request.context.signIn.owner(ofLink: token) else {
            return invalidLink(refusal: false)
        }
        return form(token: token, email: owner.email, askCode: owner.hasSecondFactor, message: nil, status: 200)
    }

    static func signIn(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let token = request.form["token"] ?? ""
        let code = request.form["code"]
        do {
            // A session this browser had ends with the new sign-in: nobody's page can swap sessions under an owner.
            let signedIn = try await request.context.signIn.signIn(
                link: token, code: code, client: request.client, replacing: SessionCookie.token(in: request.http))
            let secure = SessionCookie.isHTTPS(request.http, trustedProxies: request.context.trustedProxies)
            return .redirect("/console", setCookie: SessionCookie.set(signedIn.session, secure: secure))
        } catch let refusal as OwnerSignInError {
            let message: String
            switch refusal {
            case .invalidLink: return invalidLink(refusal: true)
            case .codeRequired: message = "Enter the code from your authenticator app."
            case .wrongCode: message = "That code is wrong or was already used. Enter the current code."
            }
            return form(token: token, email: nil, askCode: true, message: message, status: 401)
        }
    }

    static func signOut(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        try await request.context.sessions.end(request.owner)
        let secure = SessionCookie.isHTTPS(request.http, trustedProxies: request.context.trustedProxies)
        return .redirect("/console/sign-in", setCookie: SessionCookie.clear(secure: secure))
    }

    /// A refused POST (someone trying links) waits before it is sent; a link opened (GET) does not.
    private static func invalidLink(refusal: Bool) -> ConsoleAnswer {
        .bare(
            title: "Sign-in link not valid",
            body: """
                <p class="error">This sign-in link is unknown, already used or expired.</p>
                <p>Ask for a new one: <code>quote-server owner add EMAIL</code> prints a fresh link.</p>
                """, status: 400, refusal: refusal)
    }

    private static func form(token: String, email: String?, askCode: Bool, message: String?, status: Int)
        -> ConsoleAnswer
    {
        let who: HTML = email.map { "<p>Signing in as <strong>\($0)</strong>.</p>" } ?? .empty
        let error: HTML = message.map { "<p class=\"error\">\($0)</p>" } ?? .empty
        let code: HTML =
            askCode
            ? """
            <label>Authenticator code <input name="code" inputmode="numeric" autocomplete="one-time-code"
            pattern="[0-9 ]*" maxlength="8" required></label>
            """ : .empty
        return .bare(
            title: "Sign in",
            body: """
                \(who)\(error)
                <form class="stack" method="post" action="/console/sign-in">
                <input type="hidden" name="token" value="\(token)">\(code)
                <button type="submit">Sign in</button></form>
                """, status: status)
    }
}
