import Foundation
import AuthJWT
import HTTPServer
import QuoteVault

/// The policies `/v1` routes are declared with; every failure is answered as problem+json. Their stages, in order:
/// the surface's (the client's address, admission by cost: `RouteTable`), then `idempotency` on the writes.
struct V1Policies {
    /// Anyone, after the surface's stages.
    let `public`: RoutePolicy
    /// Sign-up, login, refresh, reset: anyone, with a credentials-sized body (a megabyte of "password" is an attack).
    var signIn: RoutePolicy { `public`.bodies(upTo: RoutePolicy.credentialBodyLimit) }
    /// A user's access token of a live session.
    let user: RoutePolicy
    /// The same, for writes: `Idempotency-Key` is honoured (`IdempotentWrites`).
    let userWrite: RoutePolicy

    /// Health, metrics, the OpenAPI document: no stages, answered from memory on the event loop. A probe is
    /// never queued or refused by admission (it does no database work), and it binds no address (nothing it
    /// calls throttles by address).
    static let probe = RoutePolicy.open

    init(_ context: AppContext, surface: [Stage]) {
        `public` = RoutePolicy(stages: surface)
        user = `public`.authenticated(by: .userToken(context.authenticator))
        userWrite = user.staged(IdempotentWrites(store: context.sync.idempotency).stage)
    }
}

extension Authentication {
    /// `Authorization: Bearer <access token>`: the signature and expiry from the headers (so an anonymous client
    /// cannot make the server buffer a body), then once that the session is live. The caller is an
    /// `AuthenticatedUser`.
    static func userToken(_ authenticator: Authenticator) -> Authentication {
        Authentication(name: "user_token") { request in
            let claims = try authenticator.verify(request.bearerToken)
            return Verified(caller: claims, account: claims.sub, mayStreamLargeBodies: true)
        } resolve: { _, credentials in
            guard let claims = credentials.caller as? AccessTokenClaims else { throw Failure.internal }
            return try await authenticator.live(claims)
        }
    }
}

extension Request {
    /// The caller of a route declared with `V1Policies.user`.
    var user: AuthenticatedUser {
        get throws { try caller(AuthenticatedUser.self) }
    }

    /// The id of `user`.
    var userID: UUID {
        get throws { try user.userID }
    }
}
