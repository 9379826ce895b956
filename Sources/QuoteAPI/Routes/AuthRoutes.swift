import Foundation
import HTTPServer
import QuoteVault

/// `/v1/auth/…`: sign-up, login, refresh, logout, password reset.
struct AuthRoutes {
    let context: AppContext
    var accounts: AccountService { context.accounts }

    private struct SignUpBody: Decodable { let email: String; let password: String; let display_name: String? }
    private struct LogInBody: Decodable { let email: String; let password: String }
    private struct RefreshBody: Decodable { let refresh_token: String }
    private struct ResetBody: Decodable { let email: String }
    private struct ConfirmBody: Decodable { let token: String; let password: String }

    @Sendable func signUp(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(SignUpBody.self)
        return .session(
            try await accounts.signUp(email: body.email, password: body.password, displayName: body.display_name),
            status: 201)
    }

    @Sendable func logIn(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(LogInBody.self)
        return .session(
            try await accounts.logIn(email: body.email, password: body.password, clientAddress: request.clientAddress))
    }

    @Sendable func refresh(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(RefreshBody.self)
        return .session(try await accounts.refresh(refreshToken: body.refresh_token))
    }

    @Sendable func logOut(_ request: Request) async throws -> Response {
        try await accounts.logOut(try request.user)
        return .noContent
    }

    @Sendable func requestReset(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(ResetBody.self)
        try await accounts.requestPasswordReset(email: body.email, clientAddress: request.clientAddress)
        return .json(bytes: Array(#"{"status":"accepted"}"#.utf8), status: 202)
    }

    @Sendable func confirmReset(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(ConfirmBody.self)
        return .session(try await accounts.confirmPasswordReset(token: body.token, newPassword: body.password))
    }
}
