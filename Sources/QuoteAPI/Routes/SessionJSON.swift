import Foundation
import HTTPServer
import QuoteVault

extension JSONWriter {
    /// `{id, email, display_name, avatar_url, preferences, created_at, updated_at}`.
    mutating func user(_ user: User) {
        raw("{")
        key("id"); uuid(user.id); comma()
        key("email"); string(user.email); comma()
        key("display_name"); string(user.displayName); comma()
        key("avatar_url"); string(user.avatarURL); comma()
        key("preferences"); preferences(user.preferences); comma()
        key("created_at"); timestamp(user.createdAt); comma()
        key("updated_at"); timestamp(user.updatedAt)
        raw("}")
    }

    mutating func preferences(_ preferences: Preferences) {
        raw("{")
        key("color_scheme"); string(preferences.colorScheme); comma()
        key("accent_color"); string(preferences.accentColor); comma()
        key("font_size"); string(preferences.fontSize); comma()
        key("notification_enabled"); bool(preferences.notificationEnabled); comma()
        key("notification_time"); string(preferences.notificationTime)
        raw("}")
    }

    /// `{access_token, token_type, expires_in, expires_at, refresh_token, user}`.
    mutating func session(_ session: Session) {
        raw("{")
        key("access_token"); string(session.accessToken); comma()
        key("token_type"); string("bearer"); comma()
        key("expires_in"); int(session.expiresIn); comma()
        key("expires_at"); int(session.expiresAt); comma()
        key("refresh_token"); string(session.refreshToken); comma()
        key("user"); user(session.user)
        raw("}")
    }
}

extension Response {
    static func session(_ session: Session, status: Int = 200) -> Response {
        // Tokens must not be stored by caches on the way.
        .json(capacity: 1024, status: status, headers: ["Cache-Control": "no-store"]) { $0.session(session) }
    }

    static func user(_ user: User) -> Response {
        .json(capacity: 512, headers: ["Cache-Control": "no-store"]) { $0.user(user) }
    }
}
