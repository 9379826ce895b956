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
    /// The secret service role key (`SUPABASE_SERVICE_ROLE_KEY`): row rules do not apply, as Supabase's
    /// `service_role` bypasses row-level security. It is never a user, so it opens nothing on `/v1`.
    case serviceRole

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

    /// From the headers (no database): a key's role, or a user's well-signed, unexpired access token. A bearer
    /// token counts over the `apikey` header.
    static func verify(_ request: Request, context: SupabaseContext) throws -> Verified {
        if let role = (request.bearerToken ?? request.headers["apikey"]).flatMap({ keyRole($0, context: context) }) {
            return Verified(caller: role, mayStreamLargeBodies: role == .serviceRole)
        }
        guard let token = request.bearerToken else { throw Refusal.missingKey }
        do {
            let claims = try context.signer.verify(token, audience: "authenticated", now: .now)
            return Verified(caller: claims, account: claims.sub, mayStreamLargeBodies: true)
        } catch {
            // Well signed but past `exp`: the clients refresh on "JWT expired" rather than signing the user out.
            throw error == .expired ? Refusal.expiredToken : Refusal.invalidToken
        }
    }

    /// The caller of verified credentials: a user's session must still be live.
    static func resolve(_ credentials: Verified, context: SupabaseContext) async throws -> SupabaseCaller {
        guard let claims = credentials.caller as? AccessTokenClaims else {
            guard let role = credentials.caller as? SupabaseCaller else { throw Failure.internal }
            return role
        }
        do {
            return .user(try await context.authenticator.live(claims))
        } catch QuoteVaultError.unauthorized {
            throw Refusal.invalidToken
        }
    }

    /// For endpoints that act before or without a session (sign-up, token grants, recovery): only the API key
    /// counts, so a stale or revoked access token still in the client's headers does not block a refresh.
    static func requireKey(_ request: Request, context: SupabaseContext) throws -> Verified {
        let roles = [request.headers["apikey"], request.bearerToken].compactMap { $0 }.compactMap {
            keyRole($0, context: context)
        }
        guard !roles.isEmpty else { throw Refusal.missingKey }
        return Verified(caller: SupabaseCaller.anonymous, mayStreamLargeBodies: roles.contains(.serviceRole))
    }

    /// The role a key stands for: the anon key, the service role key (compared in constant time), or nil.
    static func keyRole(_ presented: String, context: SupabaseContext) -> SupabaseCaller? {
        let bytes = Array(presented.utf8)
        if ConstantTime.equals(bytes, Array(context.anonKey.utf8)) { return .anonymous }
        if let serviceKey = context.serviceRoleKey, ConstantTime.equals(bytes, Array(serviceKey.utf8)) {
            return .serviceRole
        }
        return nil
    }
}

extension SupabaseCaller.Refusal: FailureConvertible {
    public var failure: Failure { .unauthorized }
}
