import Foundation
import PGClient

/// An account as the API shows it: `{id, email, display_name, avatar_url, preferences, created_at, updated_at}`.
public struct User: Sendable {
    public let id: UUID
    public let email: String
    public let displayName: String?
    /// `profiles.avatar_url`: the avatar's absolute URL `<public URL>/v1/avatars/{id}?v=<etag>` once one is stored
    /// (the public URL as configured at the upload), or what the owner wrote there through `/rest/v1` (the app
    /// writes its storage URL); nil without an avatar.
    public let avatarURL: String?
    public let preferences: Preferences
    /// Free-form metadata the user may change (Supabase's `user_metadata`).
    public let metadata: [String: JSONValue]
    public let createdAt: Date
    public let updatedAt: Date

    /// The path `/v1` serves the avatar with this content hash at.
    public static func avatarPath(_ id: UUID, etag: String) -> String { "/v1/avatars/\(id.canonicalText)?v=\(etag)" }

    /// Selects everything `init(row:)` needs for the user `id`.
    static func query(id: UUID) -> PGQuery {
        """
        SELECT u.id, u.email, p.display_name, p.avatar_url, p.preferences, u.user_metadata, u.created_at,
               greatest(u.updated_at, p.updated_at) AS updated_at
        FROM users u JOIN profiles p ON p.id = u.id
        WHERE u.id = \(id)
        """
    }

    init(row: PGRow) throws {
        id = try row.decode("id")
        email = try row.decode("email")
        displayName = try row.decode("display_name")
        avatarURL = try row.decode("avatar_url")
        preferences = Preferences(stored: try row.decode("preferences", as: PGJSON.self).object)
        metadata = try row.decode("user_metadata", as: PGJSON.self).object
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
    }

    /// Loads the user `id`; `unauthorized` when the account is gone (its token outlived it).
    static func load(_ id: UUID, _ connection: PGConnection) throws -> User {
        guard let row = try connection.query(query(id: id)).first else { throw QuoteVaultError.unauthorized }
        return try User(row: row)
    }
}

/// What sign-up, login, refresh and reset answer:
/// `{access_token, token_type, expires_in, expires_at, refresh_token, user}`.
public struct Session: Sendable {
    public let accessToken: String
    public let expiresIn: Int
    public let expiresAt: Int
    public let refreshToken: String
    public let user: User
}
