import AuthJWT
import Foundation
import HTTPServer
import QuoteVault

/// Who a Supabase-protocol request acts as, decided once for `/auth/v1`, `/rest/v1` and `/storage/v1` alike.
///
/// The clients send `apikey: <anon key>` on every request and `Authorization: Bearer <anon key>` until sign-in,
/// then `Bearer <access token>`. The anon key stands for the anonymous role; an access token is one of this
/// server's own tokens (the same sessions as `/v1`), so a user signed in through either API is the same user.
public enum SupabaseCaller: Sendable, Equatable {
    case anonymous
    case user(AuthenticatedUser)

    /// Why a request was refused; each surface renders it in its own error format.
    public enum Refusal: Error, Sendable, Equatable {
        /// Neither an `apikey` header nor a bearer token.
        case missingKey
        /// A bearer token that is neither the anon key nor a valid access token of a live session.
        case invalidToken
        /// A well-signed access token past its `exp`.
        case expiredToken
    }

    public var user: AuthenticatedUser? {
        if case .user(let user) = self { user } else { nil }
    }

    /// Resolves the caller of `request`.
    /// - Throws: `Refusal`, or a `PGError` when the session check cannot reach the database.
    public static func resolve(_ request: Request, context: SupabaseContext) async throws -> SupabaseCaller {
        let anonKey = context.anonKey
        guard let token = request.bearerToken else {
            guard let apiKey = request.headers["apikey"], ConstantTime.equals(Array(apiKey.utf8), Array(anonKey.utf8)) else {
                throw Refusal.missingKey
            }
            return .anonymous
        }
        if ConstantTime.equals(Array(token.utf8), Array(anonKey.utf8)) { return .anonymous }
        do {
            return .user(try await context.authenticator.authenticate(token))
        } catch QuoteVaultError.unauthorized {
            throw isExpired(token, signer: context.signer) ? Refusal.expiredToken : Refusal.invalidToken
        }
    }

    /// For endpoints that act before or without a session (sign-up, token grants, recovery): only the API key
    /// counts, so a stale or revoked access token still in the client's headers does not block a refresh.
    public static func requireKey(_ request: Request, context: SupabaseContext) throws -> SupabaseCaller {
        let anonKey = Array(context.anonKey.utf8)
        let presented = [request.headers["apikey"], request.bearerToken].compactMap { $0 }
        guard presented.contains(where: { ConstantTime.equals(Array($0.utf8), anonKey) }) else { throw Refusal.missingKey }
        return .anonymous
    }

    /// Well signed but past `exp`: the clients refresh on "JWT expired" rather than signing the user out.
    private static func isExpired(_ token: String, signer: JWTSigner) -> Bool {
        do {
            _ = try signer.verify(token, now: .now)
            return false
        } catch {
            return error == .expired
        }
    }
}
