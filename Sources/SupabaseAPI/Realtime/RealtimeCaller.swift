import AuthJWT
import Foundation

/// Whose rows a socket may see, from its latest token: the anon key (public tables only), the service role
/// key (every row), or a user's access token of a live session (the user's own rows and public ones).
enum RealtimeCaller: Sendable, Equatable {
    case anonymous
    case serviceRole
    case user(id: UUID, session: UUID, expires: Int)

    var userID: UUID? {
        if case .user(let id, _, _) = self { id } else { nil }
    }

    /// Whether a row of `table` owned by `owner` may reach this caller (the rule of `/rest/v1`).
    func mayRead(table: String, owner: UUID?) -> Bool {
        if RealtimeSubscription.publicTables.contains(table) { return true }
        switch self {
        case .serviceRole: return true
        case .anonymous: return false
        case .user(let id, _, let expires):
            return owner == id && Int(Date().timeIntervalSince1970) < expires
        }
    }
}

/// A token as a join or `access_token` presents it, checked without the database.
enum PresentedToken {
    case key(RealtimeCaller)
    /// A well-signed, unexpired access token whose session must still be found live.
    case accessToken(AccessTokenClaims)
    case invalid(String)

    init(_ token: String, keys: RealtimeKeys) {
        if let role = keys.role(of: token) {
            self = .key(role)
            return
        }
        do {
            self = .accessToken(try keys.signer.verify(token, audience: "authenticated", now: .now))
        } catch {
            self = .invalid(error == .expired ? "Token has expired" : "Invalid token")
        }
    }
}

/// The keys a token is checked against.
struct RealtimeKeys: Sendable {
    let anonKey: String
    let serviceRoleKey: String?
    let signer: JWTSigner

    /// The role a key stands for (compared in constant time), or nil for anything else.
    func role(of presented: String) -> RealtimeCaller? {
        let bytes = Array(presented.utf8)
        if ConstantTime.equals(bytes, Array(anonKey.utf8)) { return .anonymous }
        if let serviceRoleKey, ConstantTime.equals(bytes, Array(serviceRoleKey.utf8)) { return .serviceRole }
        return nil
    }
}
