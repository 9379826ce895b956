import HTTPServer
import QuoteVault

/// `/auth/v1`: the part of GoTrue's API the Supabase clients use, on the same accounts, sessions and rules as
/// `/v1/auth` (every rule lives in `AccountService`/`ProfileService`; this file only speaks GoTrue's shapes).
struct GoTrueRoutes {
    let context: SupabaseContext

    var routes: [Route] {
        [
            Route(.post, "/auth/v1/signup", handler: answering(signUp, needsSession: false)),
            Route(.post, "/auth/v1/token", handler: answering(token, needsSession: false)),
            Route(.get, "/auth/v1/user", handler: answering(user)),
            Route(.put, "/auth/v1/user", handler: answering(updateUser)),
            Route(.post, "/auth/v1/logout", handler: answering(logOut)),
            Route(.post, "/auth/v1/recover", handler: answering(recover, needsSession: false)),
        ]
    }

    private struct SignUpBody: Decodable { let email: String; let password: String; let data: [String: JSONValue]? }
    private struct PasswordGrant: Decodable { let email: String; let password: String }
    private struct RefreshGrant: Decodable { let refresh_token: String }
    private struct UserChanges: Decodable { let data: [String: JSONValue]?; let email: String?; let password: String? }
    private struct RecoverBody: Decodable { let email: String }

    /// Runs `handler` after checking the API key (and, where `needsSession`, the bearer token), and answers
    /// whatever it throws in GoTrue's error format.
    private func answering(
        _ handler: @escaping @Sendable (Request, SupabaseCaller) async throws -> Response, needsSession: Bool = true
    ) -> Handler {
        let context = self.context
        return Handler { request in
            do {
                let caller = needsSession
                    ? try await SupabaseCaller.resolve(request, context: context)
                    : try SupabaseCaller.requireKey(request, context: context)
                var response = try await handler(request, caller)
                response.headers.set(GoTrueError.apiVersionHeader.0, GoTrueError.apiVersionHeader.1)
                return response
            } catch {
                return GoTrueError.answer(for: error, logger: context.logger)
            }
        }
    }

    private static func session(_ session: Session) -> Response {
        var writer = JSONWriter(capacity: 1024)
        writer.goTrueSession(session)
        return .json(bytes: writer.bytes)
    }

    private static func user(_ user: User) -> Response {
        var writer = JSONWriter(capacity: 512)
        writer.goTrueUser(user)
        return .json(bytes: writer.bytes)
    }

    /// Accounts are confirmed at once, so sign-up answers a Session (as GoTrue with auto-confirm does).
    @Sendable private func signUp(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let body = try request.decodeJSON(SignUpBody.self)
        let metadata = body.data ?? [:]
        let session = try await context.accounts.signUp(
            email: body.email, password: body.password, displayName: metadata["display_name"]?.stringValue,
            metadata: metadata)
        return Self.session(session)
    }

    @Sendable private func token(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        switch request.queryValue("grant_type") {
        case "password":
            let body = try request.decodeJSON(PasswordGrant.self)
            return Self.session(try await context.accounts.logIn(
                email: body.email, password: body.password, clientAddress: request.clientAddress))
        case "refresh_token":
            let body = try request.decodeJSON(RefreshGrant.self)
            return Self.session(try await context.accounts.refresh(refreshToken: body.refresh_token))
        default:
            throw GoTrueError(status: 400, code: "unsupported_grant_type",
                              message: "grant_type must be password or refresh_token")
        }
    }

    /// The signed-in user, or GoTrue's refusal (401 without a user token, 403 for a bad one).
    private func signedIn(_ caller: SupabaseCaller) throws -> AuthenticatedUser {
        guard let user = caller.user else { throw GoTrueError.noAuthorization }
        return user
    }

    @Sendable private func user(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        Self.user(try await context.profiles.user(try signedIn(caller).userID))
    }

    @Sendable private func updateUser(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let user = try signedIn(caller)
        let body = try request.decodeJSON(UserChanges.self)
        guard body.email == nil, body.password == nil else {
            throw GoTrueError(status: 422, code: "validation_failed",
                              message: "Email and password changes are not supported; use password recovery")
        }
        guard let data = body.data else { return Self.user(try await context.profiles.user(user.userID)) }
        return Self.user(try await context.profiles.mergeMetadata(user.userID, data))
    }

    @Sendable private func logOut(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let user = try signedIn(caller)
        guard let scope = AccountService.LogoutScope(rawValue: request.queryValue("scope") ?? "global") else {
            throw GoTrueError(status: 400, code: "validation_failed", message: "scope must be global, local or others")
        }
        try await context.accounts.logOut(user, scope: scope)
        return .noContent
    }

    /// Always `{}` for a well-formed email, whether or not the account exists (no account enumeration).
    @Sendable private func recover(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        try await context.accounts.requestPasswordReset(email: try request.decodeJSON(RecoverBody.self).email)
        return .json(bytes: Array("{}".utf8))
    }
}
