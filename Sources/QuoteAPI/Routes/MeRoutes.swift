import Foundation
import HTTPServer
import QuoteVault

/// `/v1/me…` and `/v1/avatars/{user_id}`: the caller's account, profile and avatar.
struct MeRoutes {
    let context: AppContext
    var profiles: ProfileService { context.profiles }

    private struct PatchBody: Decodable { let display_name: JSONValue?; let preferences: JSONValue? }
    private struct DeleteBody: Decodable { let password: String }

    @Sendable func me(_ request: Request) async throws -> Response {
        .user(try await profiles.user(try request.userID))
    }

    /// The caller's account, profile, preferences and library in one JSON document, to take elsewhere.
    @Sendable func export(_ request: Request) async throws -> Response {
        let exported = try await AccountExport(pool: context.pool).export(try request.userID)
        var writer = JSONWriter(capacity: 4096 + exported.library.utf8.count)
        writer.raw("{")
        writer.key("exported_at"); writer.timestamp(Date()); writer.comma()
        writer.key("user"); writer.user(exported.user); writer.comma()
        // The library object's members (favorites, collections), spliced in after its opening brace.
        writer.raw(bytes: Array(exported.library.utf8.dropFirst()))
        return .json(
            bytes: writer.bytes,
            headers: [
                "Cache-Control": "no-store", "Content-Disposition": "attachment; filename=\"quotevault-export.json\"",
            ])
    }

    @Sendable func update(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(PatchBody.self)
        return .user(
            try await profiles.update(
                try request.userID, displayName: Self.presence(body.display_name, in: request, key: "display_name"),
                preferences: body.preferences))
    }

    /// `JSONValue?` decodes both an absent key and `null` as nil; tell them apart (absent: leave as is).
    private static func presence(_ value: JSONValue?, in request: Request, key: String) -> JSONValue? {
        if let value { return value }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            object.keys.contains(key)
        else {
            return nil
        }
        return .null
    }

    @Sendable func deleteAccount(_ request: Request) async throws -> Response {
        let user = try request.user
        let body = try request.decodeJSON(DeleteBody.self)
        try await context.accounts.deleteAccount(user, password: body.password)
        return .noContent
    }

    @Sendable func putAvatar(_ request: Request) async throws -> Response {
        guard let type = request.mediaType, ["image/png", "image/jpeg"].contains(type) else {
            throw QuoteVaultError.unsupportedMediaType("Send the image as image/png or image/jpeg")
        }
        return .user(try await profiles.setAvatar(try request.userID, bytes: request.body))
    }

    @Sendable func deleteAvatar(_ request: Request) async throws -> Response {
        .user(try await profiles.removeAvatar(try request.userID))
    }

    @Sendable func avatar(_ request: Request) async throws -> Response {
        let avatar = try await profiles.avatar(of: try request.uuidParameter("user_id"))
        // A URL carrying the current version (?v=) never changes; others must revalidate with the ETag (a match is
        // answered 304 by the server, as for every answer with an ETag).
        let cacheControl =
            request.queryValue("v") == avatar.etag ? "public, max-age=31536000, immutable" : "public, no-cache"
        var headers: HTTPHeaders = [
            "Content-Type": avatar.contentType, "ETag": "\"\(avatar.etag)\"", "Cache-Control": cacheControl,
        ]
        headers.markAsUserContent()
        return Response(status: 200, headers: headers, body: avatar.bytes)
    }
}
