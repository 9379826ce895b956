import AuthJWT
import HTTPServer
import Foundation
import Logging

/// Who may send a request body, decided from the headers before a byte of it is read, so an anonymous client
/// cannot make the server buffer uploads it would refuse anyway. Only the signature and expiry of a token are
/// checked here (no database); the route still authenticates fully.
///
/// - `/v1/auth/…` (sign-up, login, refresh, reset) take bodies from anyone, except logout; like `/auth/v1/…`,
///   at most `authBodyLimit` bytes (credentials are small: a megabyte of "password" is an attack).
/// - Every other `/v1` route needs a well-signed, unexpired access token.
/// - The Supabase surfaces need the anon key (`apikey` or bearer) or a well-signed access token, and answer in
///   their own error formats.
enum BodyAdmission {
    static let authBodyLimit = 64 * 1024

    static func make(context: AppContext) -> HTTPServer.Admission {
        let signer = context.signer
        let anonKey = Array(context.configuration.supabaseAnonKey.utf8)
        let logger = context.logger
        return { route, request in
            let pattern = route.pattern
            if pattern.hasPrefix("/v1/auth/") || pattern.hasPrefix("/auth/v1/"),
               let declared = request.headers["Content-Length"].flatMap(Int.init), declared > authBodyLimit {
                return HTTPError.payloadTooLarge(limit: authBodyLimit).response
            }
            if pattern.hasPrefix("/v1/") {
                if pattern.hasPrefix("/v1/auth/"), pattern != "/v1/auth/logout" { return nil }
                return hasValidToken(request, signer) ? nil : HTTPError.unauthorized().response
            }
            let supabase = ["/auth/v1/", "/rest/v1/", "/storage/v1/"]
            guard supabase.contains(where: { pattern.hasPrefix($0) }) else { return nil }
            let presented = [request.headers["apikey"], request.bearerToken].compactMap { $0 }
            if presented.contains(where: { ConstantTime.equals(Array($0.utf8), anonKey) }) || hasValidToken(request, signer) {
                return nil
            }
            let refusal: SupabaseCaller.Refusal
            if let token = request.bearerToken {
                refusal = isExpired(token, signer) ? .expiredToken : .invalidToken
            } else {
                refusal = .missingKey
            }
            if pattern.hasPrefix("/auth/v1/") { return GoTrueError.answer(for: refusal, logger: logger) }
            if pattern.hasPrefix("/rest/v1/") { return RestError.answer(for: refusal, anonymous: true, logger: logger) }
            return StorageError.answer(for: refusal, logger: logger)
        }
    }

    private static func hasValidToken(_ request: Request, _ signer: JWTSigner) -> Bool {
        guard let token = request.bearerToken else { return false }
        return (try? signer.verify(token, audience: "authenticated", now: .now)) != nil
    }

    private static func isExpired(_ token: String, _ signer: JWTSigner) -> Bool {
        do {
            _ = try signer.verify(token, now: .now)
            return false
        } catch {
            return error == .expired
        }
    }
}
