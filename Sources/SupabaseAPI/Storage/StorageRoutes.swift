import Foundation
import HTTPServer
import QuoteVault

/// `/storage/v1` for the public `avatars` bucket. The bucket holds at most one object per user, under
/// `<user id>/<name>`: the user's avatar, the same data as `/v1/me/avatar` (stored, checked and sized by
/// `ProfileService`). A user writes only under their own id; anyone reads.
struct StorageRoutes {
    let context: SupabaseContext

    static let bucket = "avatars"
    /// A 2 MiB image plus the multipart envelope.
    static let maximumUpload = 3 << 20

    /// Only the `avatars` bucket exists.
    static let avatarsBucketOnly = Stage("avatars_bucket_only") { request, _, next in
        guard request.pathParameter("bucket") == bucket else { throw StorageError.bucketNotFound }
        return try await next(request)
    }

    /// The longest object name, in Unicode scalars (PostgreSQL's characters, as the table's check counts them).
    static let maximumNameLength = 200

    /// `<user id>/<name>`: the owner and the object name, or nil for any other shape.
    private static func objectPath(_ path: String) -> (owner: UUID, name: String)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 2, let owner = UUID(uuidString: String(segments[0])), isValidName(segments[1]) else {
            return nil
        }
        return (owner, String(segments[1]))
    }

    /// 1–200 characters, no control characters (NUL included), not `.` or `..`.
    private static func isValidName(_ name: Substring) -> Bool {
        let scalars = name.unicodeScalars
        return !scalars.isEmpty && scalars.count <= maximumNameLength && name != "." && name != ".."
            && !scalars.contains { $0.properties.generalCategory == .control || $0 == "\u{FFFD}" }
    }

    /// The caller's own object path, or the storage API's refusal: a malformed name (400 `InvalidKey`), a path
    /// outside the caller's folder (row-level security).
    private static func ownPath(_ request: Request, _ caller: SupabaseCaller) throws -> (
        user: AuthenticatedUser, name: String
    ) {
        let path = request.pathParameter("path")
        let folder =
            path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard let user = caller.user, UUID(canonicalText: folder) == user.userID else { throw StorageError.forbidden }
        guard let (owner, name) = objectPath(path), owner == user.userID else { throw StorageError.invalidKey }
        return (user, name)
    }

    /// The uploaded bytes (the multipart part that carries a file: named `file` by supabase-py, `""` by
    /// supabase-swift; or a raw body) and the max-age asked for by a `cacheControl` part or a `Cache-Control` header.
    private static func upload(_ request: Request) throws -> (bytes: [UInt8], cacheMaxAge: Int?) {
        // A request's own Cache-Control may be about the request (`no-cache` from a proxy): used only when it is a
        // max-age.
        let header = request.headers["Cache-Control"].flatMap { try? parseMaxAge($0) }
        guard let contentType = request.headers["Content-Type"],
            contentType.lowercased().hasPrefix("multipart/form-data")
        else {
            return (request.body, header)
        }
        let form = try MultipartForm(body: request.body, contentType: contentType)
        guard
            let file = form.parts.first(where: { $0.filename != nil })
                ?? form.parts.first(where: { $0.name != "cacheControl" && $0.name != "metadata" })
        else { throw StorageError(statusCode: "400", error: "invalid_request", message: "No file in the form") }
        let part = try form.parts.first { $0.name == "cacheControl" && $0.filename == nil }
            .map { try parseMaxAge(String(decoding: $0.body, as: UTF8.self)) }
        return (file.body, part ?? header)
    }

    /// The longest max-age an upload may ask for: a year.
    static let maximumMaxAge = 31_536_000

    /// `60` (the clients' cacheControl) or `max-age=60` (a Cache-Control header), 0 to a year.
    private static func parseMaxAge(_ text: String) throws -> Int {
        var value = Substring(text.trimmingCharacters(in: .whitespaces))
        if value.lowercased().hasPrefix("max-age=") { value = value.dropFirst("max-age=".count) }
        guard value.count <= 9, value.allSatisfy(\.isASCII), let seconds = Int(value),
            (0...maximumMaxAge).contains(seconds)
        else {
            throw StorageError(
                statusCode: "400", error: "invalid_request",
                message: "cacheControl must be a number of seconds from 0 to \(maximumMaxAge)")
        }
        return seconds
    }

    /// The user's one object, if any.
    private func existing(of user: UUID) async throws -> Avatar? {
        do {
            return try await context.profiles.avatar(of: user)
        } catch QuoteVaultError.notFound {
            return nil
        }
    }

    /// POST: a new object; with `x-upsert: true` it may replace the user's current one.
    @Sendable func upload(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let (user, name) = try Self.ownPath(request, caller)
        let upsert = request.headers["x-upsert"]?.lowercased() == "true"
        if !upsert, try await existing(of: user.userID) != nil { throw StorageError.duplicate }
        return try await store(request, user: user, name: name)
    }

    /// PUT: replaces the object at this path, which must exist.
    @Sendable func update(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        let (user, name) = try Self.ownPath(request, caller)
        guard try await existing(of: user.userID)?.storageName == name else { throw StorageError.notFound }
        return try await store(request, user: user, name: name)
    }

    private func store(_ request: Request, user: AuthenticatedUser, name: String) async throws -> Response {
        let upload = try Self.upload(request)
        _ = try await context.profiles.setAvatar(
            user.userID, bytes: upload.bytes, storageName: name, cacheMaxAge: upload.cacheMaxAge)
        let path = request.pathParameter("path")
        var writer = JSONWriter(capacity: 128)
        writer.raw("{")
        writer.key("Key"); writer.string("\(Self.bucket)/\(path)"); writer.comma()
        // One object per user: its id is stable for the life of the avatar slot.
        writer.key("Id"); writer.string(UUID(uuidString: String(path.prefix(36)))?.canonicalText ?? path)
        writer.raw("}")
        return .json(bytes: writer.bytes)
    }

    @Sendable func download(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        try await object(at: request.pathParameter("path"), download: nil)
    }

    /// The public URL: no key needed for a public bucket; `?download=` asks for an attachment.
    @Sendable func publicDownload(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        try await object(at: request.pathParameter("path"), download: request.queryValue("download"))
    }

    private func object(at path: String, download: String?) async throws -> Response {
        guard let (owner, name) = Self.objectPath(path) else { throw StorageError.notFound }
        guard let avatar = try await existing(of: owner), avatar.storageName == name else {
            throw StorageError.notFound
        }
        var headers: HTTPHeaders = [
            "Content-Type": avatar.contentType, "ETag": "\"\(avatar.etag)\"",
            "Cache-Control": "max-age=\(avatar.cacheMaxAge ?? 3600)",
        ]
        headers.markAsUserContent()
        if let download {
            let filename = (download.isEmpty ? name : download).filter {
                $0.isLetter || $0.isNumber || ".-_".contains($0)
            }
            headers.set("Content-Disposition", "attachment; filename=\"\(filename.isEmpty ? "avatar" : filename)\"")
        }
        return Response(status: 200, headers: headers, body: avatar.bytes)
    }

    private struct RemoveBody: Decodable { let prefixes: [String] }

    /// Removes the caller's objects among `prefixes`; answers the removed ones (others are silently skipped,
    /// as the storage API does for objects the caller may not see).
    @Sendable func remove(_ request: Request, _ caller: SupabaseCaller) async throws -> Response {
        guard let user = caller.user else { throw StorageError.forbidden }
        let body = try request.decodeJSON(RemoveBody.self)
        guard body.prefixes.count <= 1000 else {
            throw StorageError(statusCode: "400", error: "invalid_request", message: "At most 1000 prefixes")
        }
        var removed: [String] = []
        if let current = try await existing(of: user.userID)?.storageName {
            let path = "\(user.userID.canonicalText)/\(current)"
            if body.prefixes.contains(where: {
                Self.objectPath($0).map { $0.owner == user.userID && $0.name == current } ?? false
            }) {
                _ = try await context.profiles.removeAvatar(user.userID)
                removed.append(path)
            }
        }
        var writer = JSONWriter(capacity: 256)
        writer.array(removed) { writer, path in
            writer.raw("{")
            writer.key("name"); writer.string(path); writer.comma()
            writer.key("bucket_id"); writer.string(Self.bucket); writer.comma()
            writer.key("owner"); writer.uuid(user.userID); writer.comma()
            writer.key("metadata"); writer.raw("{}")
            writer.raw("}")
        }
        return .json(bytes: writer.bytes)
    }
}
