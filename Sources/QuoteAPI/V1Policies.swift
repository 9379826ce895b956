import Foundation
import AuthJWT
import HTTPServer
import QuoteVault

/// The policies `/v1` routes are declared with; every failure is answered as problem+json.
struct V1Policies {
    /// Sign-up, login, refresh, reset: anyone, with a credentials-sized body (a megabyte of "password" is an attack).
    static let signIn = RoutePolicy.open.bodies(upTo: RoutePolicy.credentialBodyLimit)
    /// A user's access token of a live session.
    let user: RoutePolicy
    /// The same, for writes: `Idempotency-Key` is honoured.
    var userWrite: RoutePolicy { user.idempotent() }
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

extension AppContext {
    var policies: V1Policies { V1Policies(user: RoutePolicy(authentication: .userToken(self.authenticator))) }
}
