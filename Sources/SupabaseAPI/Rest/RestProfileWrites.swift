import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// `/rest/v1` writes of `profiles`: a user's one row, written through `ProfileService` (its validation, and
/// `preferences` as JSONB) and answered as PostgREST would.
extension RestRoutes {
    /// Profiles exist from sign-up on, so an insert or upsert of one's own profile is an update.
    func upsertProfiles(
        _ rows: [[String: JSONValue]], request: Request, query: RestQuery, user: AuthenticatedUser, sql: RestSQL
    ) async throws -> Response {
        // A caller has exactly one profile row; two rows would both land on it.
        guard rows.count == 1, let row = rows.first else {
            throw RestError(status: 400, code: "21000", message: "ON CONFLICT DO UPDATE command cannot affect row a second time",
                            hint: "A user has one profile: write it with one object")
        }
        if let id = row["id"], id.stringValue?.lowercased() != user.userID.canonicalText {
            throw RestError.rowRule("profiles", anonymous: false, insert: true)
        }
        _ = try await context.profiles.replaceColumns(
            user.userID, displayName: row["display_name"], avatarURL: row["avatar_url"], preferences: row["preferences"])
        var own = query
        own.conditions = [.compare(column: "id", op: .eq, value: .text(user.userID.uuidString), negated: false)]
        let read = try sql.read(own, from: try sql.table("profiles"))
        let body = try await context.pool.withConnection { try $0.query(read).first?.decode("body", as: String.self) ?? "[]" }
        guard Self.preferences(request)["return"] == "representation" else { return Response(status: 200) }
        if Self.wantsSingleObject(request) { return Self.json(try Self.singleObject(body, rows: 1), status: 200) }
        return Self.json(body, status: 200, contentRange: "*/*")
    }

    /// A PATCH of profiles: only the caller's own row is visible; it changes through `ProfileService` when the
    /// filters select it, and the answer is the row as PostgREST would return it.
    func updateProfile(
        _ request: Request, query: RestQuery, changes: [String: JSONValue], user: AuthenticatedUser, sql: RestSQL
    ) async throws -> Response {
        let table = try sql.table("profiles")
        var probe = query
        probe.select = [.column(name: "id", alias: nil)]
        let probeSQL = try sql.read(probe, from: table)
        let visible = try await context.pool.withConnection { try $0.query(probeSQL).first?.decode("rows", as: Int.self) ?? 0 }
        if visible > 0 {
            if let id = changes["id"], id.stringValue?.lowercased() != user.userID.canonicalText {
                throw RestError.rowRule("profiles", anonymous: false, insert: false)
            }
            _ = try await context.profiles.replaceColumns(
                user.userID, displayName: changes["display_name"], avatarURL: changes["avatar_url"], preferences: changes["preferences"])
        }
        let read = try sql.read(query, from: table)
        let (body, rows) = try await context.pool.withConnection { connection in
            let row = try connection.query(read)[0]
            return (try row.decode("body", as: String.self), try row.decode("rows", as: Int.self))
        }
        return try respondChanged(request, body: visible > 0 ? body : "[]", rows: visible > 0 ? rows : 0,
                                  range: rows > 0 && visible > 0 ? "0-\(rows - 1)/*" : "*/*")
    }
}
