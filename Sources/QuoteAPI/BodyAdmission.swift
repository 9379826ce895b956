import AuthJWT
import Console
import HTTPServer
import Foundation
import Logging
import SupabaseAPI

/// Who may send a request body, decided from the headers before a byte of it is read, so an anonymous client
/// cannot make the server buffer uploads it would refuse anyway. Only the signature and expiry of a token are
/// checked here (no database); the route still authenticates fully.
///
/// - `/v1/auth/…` (sign-up, login, refresh, reset) take bodies from anyone, except logout; like `/auth/v1/…`,
///   at most `authBodyLimit` bytes (credentials are small: a megabyte of "password" is an attack).
/// - Every other `/v1` route needs a well-signed, unexpired access token.
/// - A body over `smallBodyLimit` (an upload, a sync batch) needs a user's access token on every surface, never
///   the anon key alone: it is counted against the large bodies' share, per address and per account.
/// - The console's owner routes need a session cookie (`ConsoleAdmission`).
/// - The Supabase surfaces decide for themselves (`SupabaseAdmission`: the anon or service role key, or a
///   well-signed access token), answering in their own error formats.
enum BodyAdmission {
    static let authBodyLimit = 64 * 1024
    /// Bodies up to this are small (`HTTPServerConfiguration.smallBodyLimit`): anyone allowed on the route may
    /// send one; a larger (or chunked) body needs a user's access token (on `/v1` every body route does).
    static let smallBodyLimit = 64 * 1024

    static func make(context: AppContext, supabase: SupabaseContext) -> HTTPServer.Admission {
        let signer = context.signer
        return { route, request in
            let pattern = route.pattern
            if let refusal = ConsoleAdmission.refusal(route, request) { return refusal }
            if pattern.hasPrefix("/v1/auth/") || pattern.hasPrefix("/auth/v1/"),
               let declared = request.headers["Content-Length"].flatMap(Int.init), declared > authBodyLimit {
                return HTTPError.payloadTooLarge(limit: authBodyLimit).response
            }
            if pattern.hasPrefix("/v1/") {
                if pattern.hasPrefix("/v1/auth/"), pattern != "/v1/auth/logout" { return nil }
                return hasValidToken(request, signer) ? nil : HTTPError.unauthorized().response
            }
            guard SupabaseAdmission.covers(pattern) else { return nil }
            if let refusal = SupabaseAdmission.refusal(pattern: pattern, request, context: supabase) { return refusal }
            // A large body (an upload, a bulk write) takes the large bodies' share: a user's token only.
            guard isLarge(request) else { return nil }
            return SupabaseAdmission.largeBodyRefusal(
                pattern: pattern, request, limit: smallBodyLimit, context: supabase)
        }
    }

    private static func isLarge(_ request: Request) -> Bool {
        if request.headers["Transfer-Encoding"] != nil { return true }
        return (request.headers["Content-Length"].flatMap(Int.init) ?? 0) > smallBodyLimit
    }

    /// The account a large body is counted against: the `sub` of a well-signed access token (only such bodies are
    /// admitted, see `make`); nil for the service role key.
    static func owner(signer: JWTSigner) -> HTTPServer.BodyOwner {
        { request in
            guard let token = request.bearerToken else { return nil }
            return try? signer.verify(token, audience: "authenticated", now: .now).sub
        }
    }

    private static func hasValidToken(_ request: Request, _ signer: JWTSigner) -> Bool {
        guard let token = request.bearerToken else { return false }
        return (try? signer.verify(token, audience: "authenticated", now: .now)) != nil
    }
}
