import Foundation
import HTTPServer
import QuoteVault

/// `/auth/v1`: the part of GoTrue's API the Supabase clients use, on the same accounts, sessions and rules as
/// `/v1/auth` (every rule lives in `AccountService`/`ProfileService`; this file only speaks GoTrue's shapes).
struct GoTrueRoutes {
    let context: SupabaseContext

    private struct SignUpBody: Decodable { let email: String; let password: String; let data: [String: JSONValue]? }
    private struct PasswordGrant: Decodable { let email: String; let password: String }
    private struct RefreshGrant: Decodable { let refresh_token: String }
    private struct UserChanges: Decodable {
        let data: [String: JSONValue]?
        let email: String?
        let password: String?
        let nonce: String?
    }
    private struct RecoverBody: Decodable {
        let email: String; let code_challenge: String?; let code_challenge_method: String?
    }
    private struct PKCEGrant: Decodable { let auth_code: String; let code_verifier: String }
    private struct VerifyBody: Decodable {
        let type: String; let token_hash: String?; let token: String?; let email: String?
    }

    /// Every answer carries GoTrue's API version (failures get it from the dialect).
    static let apiVersion = Stage("gotrue_api_version") { request, _, next in
        var response = try await next(request)
        response.headers.set(GoTrueError.apiVersionHeader.0, GoTrueError.apiVersionHeader.1)
        return response
    }

    // Answers carrying tokens or the user are never stored by a cache on the way.
    private static func session(_ session: Session) -> Response {
        var writer = JSONWriter(capacity: 1024)
        writer.goTrueSession(session)
        return .json(bytes: writer.bytes, headers: ["Cache-Control": "no-store"])
    }

    private static func user(_ user: User) -> Response {
        var writer = JSONWriter(capacity: 512)
        writer.goTrueUser(user)
        return .json(bytes: writer.bytes, headers: ["Cache-Control": "no-store"])
    }

    /// Accounts are confirmed at once, so sign-up answers a Session (as GoTrue with auto-confirm does).
    @Sendable func signUp(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let body = try request.decodeJSON(SignUpBody.self)
        let metadata = body.data ?? [:]
        let session = try await context.accounts.signUp(
            email: body.email, password: body.password, displayName: metadata["display_name"]?.stringValue,
            metadata: metadata)
        return Self.session(session)
    }

    @Sendable func token(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        switch request.queryValue("grant_type") {
        case "password":
            let body = try request.decodeJSON(PasswordGrant.self)
            return Self.session(
                try await context.accounts.logIn(
                    email: body.email, password: body.password, clientAddress: request.clientAddress))
        case "refresh_token":
            let body = try request.decodeJSON(RefreshGrant.self)
            return Self.session(try await context.accounts.refresh(refreshToken: body.refresh_token))
        case "pkce":
            let body = try request.decodeJSON(PKCEGrant.self)
            return Self.session(try await context.recovery.exchange(code: body.auth_code, verifier: body.code_verifier))
        default:
            throw GoTrueError(
                status: 400, code: "unsupported_grant_type",
                message: "grant_type must be password, refresh_token or pkce")
        }
    }

    /// The signed-in user, or GoTrue's refusal (401 without a user token, 403 for a bad one).
    private func signedIn(_ caller: SupabaseCaller) throws -> AuthenticatedUser {
        guard let user = caller.user else { throw GoTrueError.noAuthorization }
        return user
    }

    @Sendable func user(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        Self.user(try await context.profiles.user(try signedIn(caller).userID))
    }

    @Sendable func updateUser(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let user = try signedIn(caller)
        let body = try request.decodeJSON(UserChanges.self)
        guard body.email == nil else {
            throw GoTrueError(status: 422, code: "validation_failed", message: "Email changes are not supported")
        }
        // Validated before anything is written: a bad password leaves the metadata unchanged too.
        if let data = body.data { _ = try UserMetadata.encode(data) }
        var changed = try await context.profiles.user(user.userID)
        if let password = body.password {
            changed = try await context.recovery.changePassword(user, to: password, nonce: body.nonce)
        }
        if let data = body.data { changed = try await context.profiles.mergeMetadata(user.userID, data) }
        return Self.user(changed)
    }

    /// Mails the nonce a password change from a session older than a day needs (supabase-swift's
    /// `reauthenticate()`); `{}` like GoTrue.
    @Sendable func reauthenticate(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        try await context.recovery.reauthentication.send(to: try signedIn(caller))
        return .json(bytes: Array("{}".utf8))
    }

    @Sendable func logOut(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let user = try signedIn(caller)
        guard let scope = AccountService.LogoutScope(rawValue: request.queryValue("scope") ?? "global") else {
            throw GoTrueError(status: 400, code: "validation_failed", message: "scope must be global, local or others")
        }
        try await context.accounts.logOut(user, scope: scope)
        return .noContent
    }

    /// Always `{}` for a well-formed email, whether or not the account exists (no account enumeration). The mail
    /// links to `GET /auth/v1/verify`, which sends the user on to an allowed `redirect_to`.
    @Sendable func recover(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let body = try request.decodeJSON(RecoverBody.self)
        if body.code_challenge != nil, body.code_challenge_method?.lowercased() != "s256" {
            throw GoTrueError(status: 400, code: "validation_failed", message: "code_challenge_method must be s256")
        }
        let verifyURL = context.publicURL + "/auth/v1/verify"
        let redirect = context.redirects.target(request.queryValue("redirect_to"))
        try await context.recovery.request(
            email: body.email, codeChallenge: body.code_challenge, clientAddress: request.clientAddress
        ) { token in
            "\(verifyURL)?token=\(token)&type=recovery&redirect_to=\(Self.queryEscaped(redirect))"
        }
        return .json(bytes: Array("{}".utf8))
    }

    /// The mail's link, opened by a browser (no key): 303 to the allowed `redirect_to` with a PKCE `code`, or with
    /// a session in the fragment (implicit flow), or with GoTrue's error fragment for a bad or used token.
    var followLink: Handler {
        let context = self.context
        return Handler { request in
            let target = RedirectAllowList.percentEncoded(context.redirects.target(request.queryValue("redirect_to")))
            var location: String
            do {
                guard request.queryValue("type") == "recovery" else { throw QuoteVaultError.resetTokenInvalid }
                switch try await context.recovery.follow(token: request.queryValue("token") ?? "") {
                case .code(let code):
                    location = target + (target.contains("?") ? "&" : "?") + "code=" + code
                case .session(let session):
                    location =
                        target + "#access_token=\(session.accessToken)&expires_at=\(session.expiresAt)"
                        + "&expires_in=\(session.expiresIn)&refresh_token=\(session.refreshToken)"
                        + "&token_type=bearer&type=recovery"
                }
            } catch QuoteVaultError.resetTokenInvalid {
                location =
                    target + "#error=access_denied&error_code=otp_expired"
                    + "&error_description=Email+link+is+invalid+or+has+expired"
            }
            return Response(status: 303, headers: ["Location": location, "Cache-Control": "no-store"], body: [])
        }
    }

    /// `verifyOTP(tokenHash:type:.recovery)` or `verifyOTP(email:token:type:.recovery)` with the mail's token: a
    /// session.
    @Sendable func verify(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let body = try request.decodeJSON(VerifyBody.self)
        guard body.type == "recovery" else {
            throw GoTrueError(status: 400, code: "validation_failed", message: "Only type recovery is supported")
        }
        let result: PasswordRecovery.LinkResult
        if let tokenHash = body.token_hash {
            result = try await context.recovery.follow(token: tokenHash, allowingCode: false)
        } else if let email = body.email, let token = body.token {
            result = try await context.recovery.follow(token: token, email: email, allowingCode: false)
        } else {
            throw GoTrueError(
                status: 400, code: "validation_failed", message: "Verify requires a token_hash, or an email and a token"
            )
        }
        guard case .session(let session) = result else { throw QuoteVaultError.resetTokenInvalid }
        return Self.session(session)
    }

    /// A query value with everything but unreserved characters percent-encoded.
    private static func queryEscaped(_ value: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
