import AuthJWT
import Foundation
import PGClient

/// An avatar image as stored.
public struct Avatar: Sendable {
    public let contentType: String
    public let bytes: [UInt8]
    public let etag: String
    /// The object name in the Supabase `avatars` bucket: the uploaded name, or `avatar`.
    public let storageName: String
    /// The max-age its storage upload asked for, if any.
    public let cacheMaxAge: Int?
}

/// The caller's profile: display name, preferences and avatar.
public struct ProfileService: Sendable {
    public static let maximumAvatarBytes = 2 * 1024 * 1024
    let pool: PGPool
    /// The server's public base URL, without a trailing slash: prefixed to the avatar's path in `avatar_url`, so
    /// that a client can load it as it is (a phone has no base to resolve a relative URL against).
    let publicURL: String

    public func user(_ userID: UUID) async throws -> User {
        try await pool.withConnection { try User.load(userID, $0) }
    }

    /// Applies a PATCH: absent fields stay; `display_name` may be set or cleared (null); `preferences` merge
    /// field by field (null resets one to its default). Validation happens before anything is written.
    public func update(_ userID: UUID, displayName: JSONValue?, preferences: JSONValue?) async throws -> User {
        let patch = try ProfilePatch(displayName: displayName, preferences: preferences)
        return try await pool.withTransaction { connection in try connection.run(Self.update(userID, patch)) }
    }

    /// Applies a validated patch (run inside a transaction: the row is locked while preferences merge).
    public static func update(_ userID: UUID, _ patch: ProfilePatch) -> PGOperation<User> {
        .connection { connection in
            let rows = try connection.query("SELECT preferences FROM profiles WHERE id = \(userID) FOR UPDATE")
            guard let row = rows.first else { throw QuoteVaultError.unauthorized }
            if let preferences = patch.preferences {
                let stored = try JSONDecoder().decode(
                    [String: JSONValue].self, from: try row.decode("preferences", as: PGJSON.self).data)
                let merged = try Preferences.merge(preferences, into: stored)
                let document = PGJSON(data: try JSONEncoder().encode(merged))
                try connection.query(
                    """
                    UPDATE profiles SET preferences = \(document), updated_at = now() WHERE id = \(userID)
                    """)
            }
            if case .some(let name) = patch.displayName {
                try connection.query(
                    """
                    UPDATE profiles SET display_name = \(name), updated_at = now() WHERE id = \(userID)
                    """)
            }
            return try User.load(userID, connection)
        }
    }

    /// A `display_name` change: `.none` when absent, `.some(nil)` to clear it; a bad value adds to `errors`.
    static func displayNameChange(_ value: JSONValue?, errors: inout [FieldError]) throws -> String?? {
        switch value {
        case nil: return .none
        case .null?: return .some(nil)
        case .string(let name)?:
            if let valid = try errors.collect({ try Credentials.validateDisplayName(name) }) { return .some(valid) }
        default: errors.append(FieldError(field: "display_name", message: "must be a string or null"))
        }
        return .none
    }

    /// The longest `avatar_url` a client may write.
    public static let maximumAvatarURLLength = 2048

    /// A `/rest/v1` write of the caller's profile row, as PostgREST writes columns: `display_name` and
    /// `avatar_url` set (or cleared), `preferences` replaced whole (JSONB, stored as written once valid).
    /// Everything is validated before anything is written; absent columns stay.
    public func replaceColumns(
        _ userID: UUID, displayName: JSONValue?, avatarURL: JSONValue?, preferences: JSONValue?
    ) async throws -> User {
        var errors: [FieldError] = []
        let newName = try Self.displayNameChange(displayName, errors: &errors)
        var newURL: String??
        switch avatarURL {
        case nil: newURL = .none
        case .null?: newURL = .some(nil)
        case .string(let url)? where !url.isEmpty && url.count <= Self.maximumAvatarURLLength && !url.contains("\u{0}"):
            newURL = .some(url)
        default:
            errors.append(
                FieldError(
                    field: "avatar_url",
                    message: "must be a string of 1 to \(Self.maximumAvatarURLLength) characters or null"))
        }
        if case .some(.some(let url)) = newURL, !AvatarURL.isAllowed(url) { errors.append(AvatarURL.refusal) }
        var document: PGJSON?
        switch preferences {
        case nil: document = nil
        case .object(let object)?:
            document = try errors.collect {
                PGJSON(data: try JSONEncoder().encode(try Preferences.validateDocument(object)))
            }
        default: errors.append(FieldError(field: "preferences", message: "must be an object"))
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        return try await pool.withTransaction { [newName, newURL, document] connection in
            let changed = try connection.query(
                """
                UPDATE profiles SET
                    display_name = CASE WHEN \(newName != nil) THEN \(newName ?? nil) ELSE display_name END,
                    avatar_url = CASE WHEN \(newURL != nil) THEN \(newURL ?? nil) ELSE avatar_url END,
                    preferences = coalesce(\(document)::jsonb, preferences),
                    updated_at = now()
                WHERE id = \(userID)
                """)
            guard changed.affectedRows == 1 else { throw QuoteVaultError.unauthorized }
            return try User.load(userID, connection)
        }
    }

    /// Merges `changes` into the user's metadata (top-level keys replaced, null values kept as null, as
    /// Supabase does).
    public func mergeMetadata(_ userID: UUID, _ changes: [String: JSONValue]) async throws -> User {
        _ = try UserMetadata.encode(changes)
        return try await pool.withTransaction { connection in
            let rows = try connection.query("SELECT user_metadata FROM users WHERE id = \(userID) FOR UPDATE")
            guard let row = rows.first else { throw QuoteVaultError.unauthorized }
            var merged = try row.decode("user_metadata", as: PGJSON.self).object
            merged.merge(changes) { _, new in new }
            try connection.query(
                """
                UPDATE users SET user_metadata = \(try UserMetadata.encode(merged)), updated_at = now()
                WHERE id = \(userID)
                """)
            return try User.load(userID, connection)
        }
    }

    /// Stores a PNG or JPEG recognised by its first bytes (whatever the declared type says).
    /// - Parameter storageName: the object name in the Supabase `avatars` bucket (nil through `/v1`).
    /// - Parameter cacheMaxAge: the max-age a storage upload asked for (nil: the default).
    public func setAvatar(_ userID: UUID, bytes: [UInt8], storageName: String? = nil, cacheMaxAge: Int? = nil)
        async throws -> User
    {
        guard let contentType = Self.imageType(of: bytes) else {
            throw QuoteVaultError.unsupportedMediaType("The image must be a PNG or JPEG")
        }
        let etag = Digest.sha256Hex(bytes)
        let avatarURL = publicURL + User.avatarPath(userID, etag: etag)
        return try await pool.withTransaction { connection in
            try connection.query(
                """
                INSERT INTO avatars (user_id, content_type, bytes, etag, storage_name, cache_max_age)
                VALUES (\(userID), \(contentType), \(bytes), \(etag), \(storageName), \(cacheMaxAge))
                ON CONFLICT (user_id) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes,
                    etag = excluded.etag, storage_name = excluded.storage_name, cache_max_age = excluded.cache_max_age,
                    updated_at = now()
                """)
            try connection.query(
                """
                UPDATE profiles SET avatar_url = \(avatarURL), updated_at = now() WHERE id = \(userID)
                """)
            return try User.load(userID, connection)
        }
    }

    /// Points every stored avatar's `avatar_url` at the public URL in effect: URLs written under another public URL
    /// (the setting changed) or before URLs were absolute (a bare path). Only a URL that ends with the avatar's own
    /// current path (`User.avatarPath`) is ours to rewrite; anything else the owner wrote stays.
    /// - Returns: how many profiles changed.
    @discardableResult
    public func rebaseAvatarURLs() async throws -> Int {
        try await pool.query(
            """
            UPDATE profiles p SET avatar_url = \(publicURL) || own.path
            FROM avatars a, LATERAL (SELECT '/v1/avatars/' || a.user_id::text || '?v=' || a.etag AS path) own
            WHERE a.user_id = p.id AND right(p.avatar_url, length(own.path)) = own.path
              AND p.avatar_url <> \(publicURL) || own.path
            """
        ).affectedRows
    }

    public func removeAvatar(_ userID: UUID) async throws -> User {
        try await pool.withTransaction { connection in
            if try connection.query("DELETE FROM avatars WHERE user_id = \(userID)").affectedRows > 0 {
                try connection.query("UPDATE profiles SET avatar_url = NULL, updated_at = now() WHERE id = \(userID)")
            }
            return try User.load(userID, connection)
        }
    }

    /// The avatar of `userID` (public); `notFound` when there is none.
    public func avatar(of userID: UUID) async throws -> Avatar {
        guard
            let row = try await pool.read(
                "SELECT content_type, bytes, etag, storage_name, cache_max_age FROM avatars WHERE user_id = \(userID)"
            ).first
        else { throw QuoteVaultError.notFound }
        return Avatar(
            contentType: try row.decode("content_type"), bytes: try row.decode("bytes"), etag: try row.decode("etag"),
            storageName: try row.decode("storage_name", as: String?.self) ?? "avatar",
            cacheMaxAge: try row.decode("cache_max_age"))
    }

    /// `image/png` or `image/jpeg` by magic bytes, else nil.
    public static func imageType(of bytes: [UInt8]) -> String? {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if bytes.count > png.count, Array(bytes.prefix(png.count)) == png { return "image/png" }
        if bytes.count > 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return "image/jpeg" }
        return nil
    }
}

/// A validated `PATCH /v1/me` body.
public struct ProfilePatch: Sendable {
    /// nil: leave as is; `.some(nil)`: clear.
    public let displayName: String??
    /// The preference fields to merge; nil: leave as they are.
    public let preferences: [String: JSONValue]?

    /// - Throws: `QuoteVaultError.validation` naming every invalid field.
    public init(displayName: JSONValue?, preferences: JSONValue?) throws {
        var errors: [FieldError] = []
        let newName = try ProfileService.displayNameChange(displayName, errors: &errors)
        var patch: [String: JSONValue]?
        switch preferences {
        case nil, .null?: patch = nil
        case .object(let object)?: patch = object
        default: errors.append(FieldError(field: "preferences", message: "must be an object"))
        }
        // Validate the patch against empty preferences first, so every field error is reported together.
        if let patch {
            try errors.collect { try Preferences.merge(patch, into: [:]) }
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        self.displayName = newName
        self.preferences = patch
    }
}
