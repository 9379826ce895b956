import AuthJWT
import Foundation
import HTTPServer

/// Who may send a request body to the Supabase surface, decided from the headers before a byte of it is read:
/// the anon key, the service role key, or a well-signed, unexpired access token (only the signature and expiry are
/// checked here, without the database; the route still resolves its caller in full). A refusal is answered in the
/// surface's own error format, as the route itself would answer it.
public enum SupabaseAdmission {
    static let prefixes = ["/auth/v1/", "/rest/v1/", "/storage/v1/"]

    /// Whether `pattern` is a route of the Supabase surface.
    public static func covers(_ pattern: String) -> Bool {
        prefixes.contains(where: { pattern.hasPrefix($0) })
    }

    /// Nil when `request` may send its body to the Supabase route `pattern`; else the answer that refuses it.
    public static func refusal(pattern: String, _ request: Request, context: SupabaseContext) -> Response? {
        let presented = [request.headers["apikey"], request.bearerToken].compactMap { $0 }
        if presented.contains(where: { SupabaseCaller.keyRole($0, context: context) != nil }) { return nil }
        let refusal: SupabaseCaller.Refusal
        if let token = request.bearerToken {
            do {
                _ = try context.signer.verify(token, audience: "authenticated", now: .now)
                return nil
            } catch {
                refusal = error == .expired ? .expiredToken : .invalidToken
            }
        } else {
            refusal = .missingKey
        }
        if pattern.hasPrefix("/auth/v1/") { return GoTrueError.answer(for: refusal, logger: context.logger) }
        if pattern.hasPrefix("/rest/v1/") { return RestError.answer(for: refusal, anonymous: true, logger: context.logger) }
        return StorageError.answer(for: refusal, logger: context.logger)
    }

    /// `error` (a refusal under load, say) answered in the error format of the Supabase route `pattern`.
    public static func answer(_ error: HTTPError, pattern: String, context: SupabaseContext) -> Response {
        if pattern.hasPrefix("/auth/v1/") { return GoTrueError.answer(for: error, logger: context.logger) }
        if pattern.hasPrefix("/rest/v1/") {
            return RestError.answer(for: error, anonymous: true, logger: context.logger)
        }
        return StorageError.answer(for: error, logger: context.logger)
    }

    /// Nil when `request` may send a large body (more than `limit` bytes, or chunked) to the Supabase route
    /// `pattern`: a signed-in user's well-signed access token, or the service role key. The anon key alone may
    /// not: anyone has it, and uploads are what fill the body budget.
    public static func largeBodyRefusal(pattern: String, _ request: Request, limit: Int, context: SupabaseContext)
        -> Response?
    {
        let presented = [request.headers["apikey"], request.bearerToken].compactMap { $0 }
        if presented.contains(where: { SupabaseCaller.keyRole($0, context: context) == .serviceRole }) { return nil }
        if let token = request.bearerToken,
           (try? context.signer.verify(token, audience: "authenticated", now: .now)) != nil {
            return nil
        }
        let message = "A request body over \(limit) bytes needs a signed-in user's access token"
        if pattern.hasPrefix("/auth/v1/") {
            return GoTrueError(status: 413, code: "request_too_large", message: message).response
        }
        if pattern.hasPrefix("/rest/v1/") { return RestError(status: 401, code: "42501", message: message).response }
        return StorageError(statusCode: "403", error: "Unauthorized", message: message, httpStatus: 403).response
    }
}
