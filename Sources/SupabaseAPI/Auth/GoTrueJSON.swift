import Foundation
import HTTPServer
import QuoteVault

/// GoTrue's Session and User shapes, with every field supabase-py and supabase-swift require.
extension JSONWriter {
    /// `{id, aud, role, email, phone, email_confirmed_at, confirmed_at, app_metadata, user_metadata, identities,
    /// created_at, updated_at, is_anonymous}`. Accounts are confirmed at sign-up (no email confirmation flow).
    mutating func goTrueUser(_ user: User) {
        raw("{")
        key("id"); uuid(user.id); comma()
        key("aud"); string("authenticated"); comma()
        key("role"); string("authenticated"); comma()
        key("email"); string(user.email); comma()
        key("phone"); string(""); comma()
        key("email_confirmed_at"); timestamp(user.createdAt); comma()
        key("confirmed_at"); timestamp(user.createdAt); comma()
        key("app_metadata"); json(SessionIssuer.appMetadata); comma()
        key("user_metadata"); json(user.metadata); comma()
        key("identities"); raw("[]"); comma()
        key("created_at"); timestamp(user.createdAt); comma()
        key("updated_at"); timestamp(user.updatedAt); comma()
        key("is_anonymous"); bool(false)
        raw("}")
    }

    /// `{access_token, token_type, expires_in, expires_at, refresh_token, user}` with a GoTrue user.
    mutating func goTrueSession(_ session: Session) {
        raw("{")
        key("access_token"); string(session.accessToken); comma()
        key("token_type"); string("bearer"); comma()
        key("expires_in"); int(session.expiresIn); comma()
        key("expires_at"); int(session.expiresAt); comma()
        key("refresh_token"); string(session.refreshToken); comma()
        key("user"); goTrueUser(session.user)
        raw("}")
    }

    /// A free-form JSON object (metadata), keys sorted.
    mutating func json(_ object: [String: JSONValue]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        raw(bytes: (try? Array(encoder.encode(object))) ?? Array("{}".utf8))
    }
}
