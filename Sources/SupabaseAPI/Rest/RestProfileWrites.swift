import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// `/rest/v1` writes of `profiles`: a user's one row, written through `ProfileService` (its validation, and
/// `preferences` as JSONB) and answered as PostgREST would.
extension RestRoutes {
    /// Profiles exist from sign-up on, so inserting one's own profile is PostgreSQL's own unique violation (409,
    /// 23505, nothing changed), as PostgREST answers, unless the client asked for an upsert: `merge-duplicates`
    /// writes the columns it names, `ignore-duplicates` leaves the row as it was.
    func upsertProfiles(
        _ rows: [[String: JSONValue]], request: Request, query: RestQuery, user: AuthenticatedUser, sql: RestSQL,
        resolution: Resolution?
    ) async throws -> Response {
        // A caller has exactly one profile row; two rows would both land on it.
        guard rows.count == 1, let row = rows.first else {
            throw RestError(
                status: 400, code: "21000", message: "ON CONFLICT DO UPDATE command cannot affect row a second time",
                hint: "A user has one profile: write it with one object")
        }
        if let id = row["id"], id.stringValue?.lowercased() != user.userID.canonicalText {
            throw RestError.rowRule("profiles", anonymous: false, insert: true)
        }
        if resolution != nil { _ = try conflictTarget(query.onConflict, of: try sql.table("profiles")) }
        // The key decides, in the database (a profile missing, which sign-up never leaves, is created here).
        let created = try await context.pool.withTransaction { connection in
            let insert: PGQuery =
                resolution == nil
                ? "INSERT INTO profiles (id) VALUES (\(user.userID))"
                : "INSERT INTO profiles (id) VALUES (\(user.userID)) ON CONFLICT (id) DO NOTHING"
            return try connection.query(insert).affectedRows == 1
        }
        let status = created ? 201 : 200
        if resolution == .ignoreDuplicates, !created {
            return try respondWritten(request, body: "[]", rows: 0, status: 201, bare: 201, range: "*/*")
        }
        _ = try await context.profiles.replaceColumns(
            user.userID, displayName: row["display_name"], avatarURL: row["avatar_url"], preferences: row["preferences"]
        )
        var own = query
        own.conditions = [.compare(column: "id", op: .eq, value: .text(user.userID.uuidString), negated: false)]
        let read = try sql.read(own, from: try sql.table("profiles"))
        let body = try await context.pool.withConnection {
            try $0.query(read).first?.decode("body", as: String.self) ?? "[]"
        }
        return try respondWritten(request, body: body, rows: 1, status: status, bare: status, range: "*/*")
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
        let visible = try await context.pool.withConnection {
            try $0.query(probeSQL).first?.decode("rows", as: Int.self) ?? 0
        }
        if visible > 0 {
            if let id = changes["id"], id.stringValue?.lowercased() != user.userID.canonicalText {
                throw RestError.rowRule("profiles", anonymous: false, insert: false)
            }
            _ = try await context.profiles.replaceColumns(
                user.userID, displayName: changes["display_name"], avatarURL: changes["avatar_url"],
                preferences: changes["preferences"])
        }
        let read = try sql.read(query, from: table)
        let (body, rows) = try await context.pool.withConnection { connection in
            let row = try connection.query(read)[0]
            return (try row.decode("body", as: String.self), try row.decode("rows", as: Int.self))
        }
        return try respondWritten(
            request, body: visible > 0 ? body : "[]", rows: visible > 0 ? rows : 0, status: 200, bare: 204,
            range: rows > 0 && visible > 0 ? "0-\(rows - 1)/*" : "*/*")
    }
}
