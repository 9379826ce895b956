import AuthJWT
import QuoteVault

/// The per-session CSRF token: an HMAC of the session's secret, so it needs no storage, differs per session, and
/// cannot be made without the cookie (HttpOnly, so no page script can read it either).
enum CSRFToken {
    static let fieldName = "csrf_token"

    static func of(_ session: OwnerSession) -> String {
        Base64URL.encode(HMACSHA256.authenticationCode(for: Array("console-csrf".utf8), key: Array(session.token.utf8)))
    }

    /// Whether `candidate` is the session's token (compared in constant time).
    static func matches(_ candidate: String?, _ session: OwnerSession) -> Bool {
        guard let candidate else { return false }
        return ConstantTime.equals(Array(candidate.utf8), Array(of(session).utf8))
    }
}
