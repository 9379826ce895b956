import Foundation
import PGClient
import TestSupport
import XCTest

/// `/rest/v1` writes as PostgREST answers them (issue 24): inserting a row whose key exists is a 409 with
/// PostgreSQL's 23505 and changes nothing, on every table it writes; only `Prefer: resolution=merge-duplicates`
/// merges and `resolution=ignore-duplicates` leaves the row as it was. A profile is part of its account: a DELETE
/// of it touches no row, and the account stays whole on both doors.
final class SupabaseConflictTests: XCTestCase {
    private var app: TestApp!

    override func setUp() async throws { app = try await TestApp.start() }
    override func tearDown() async throws { await app.stop() }

    private var serviceKey: String { app.application.context.configuration.supabaseServiceRoleKey }

    /// A POST of `body` to `table` as `user` (the service role when nil), with `prefer` and `query`.
    private func post(
        _ table: String, _ body: [String: Any], as user: TestUser?, prefer: String = "return=representation",
        query: String = ""
    ) throws -> HTTPTestResponse {
        var headers = ["Prefer": prefer]
        if user == nil { headers.merge(["apikey": serviceKey, "Authorization": "Bearer \(serviceKey)"]) { $1 } }
        return try app.supabase("POST", "/rest/v1/\(table)\(query)", as: user, body: body, headers: headers)
    }

    /// PostgREST's answer to a unique violation: 409 and `{code: "23505", details, hint, message}`.
    private func assertConflict(
        _ response: HTTPTestResponse, _ label: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertEqual(response.status, 409, "\(label): \(response.text)", file: file, line: line)
        let body = try response.jsonObject()
        XCTAssertEqual(body["code"] as? String, "23505", label, file: file, line: line)
        XCTAssertEqual(Set(body.keys), ["code", "details", "hint", "message"], label, file: file, line: line)
        let message = body["message"] as? String ?? "", details = body["details"] as? String ?? ""
        let prefix = "duplicate key value violates unique constraint"
        XCTAssertTrue(message.hasPrefix(prefix), label, file: file, line: line)
        XCTAssertTrue(details.hasSuffix("already exists."), label, file: file, line: line)
    }

    private func value(_ sql: PGQuery) async throws -> String? {
        try await app.withConnection { try $0.query(sql).first?.decode(at: 0, as: String?.self) }
    }

    func testInsertingAnExistingRowIsAConflictOnEveryTable() async throws {
        let quotes = try await app.insertQuotes(["One", "Two", "Three"], author: "A. Uthor")
        let alice = try await app.makeUser()
        let id = alice.id.uuidString.lowercased()

        // profiles: the user's own row, with and without its key in the body.
        let named = try app.supabase(
            "PATCH", "/rest/v1/profiles?id=eq.\(id)", as: alice,
            body: ["display_name": "Alice"])
        XCTAssertEqual(named.status, 204)
        for body: [String: Any] in [["id": id, "display_name": "Overwritten"], ["display_name": "Overwritten"]] {
            try assertConflict(try post("profiles", body, as: alice), "profiles \(body.keys.sorted())")
            try assertConflict(
                try post("profiles", body, as: alice, query: "?on_conflict=id"),
                "profiles with on_conflict but no resolution")
        }
        let ignored = try post(
            "profiles", ["id": id, "display_name": "Ignored"], as: alice,
            prefer: "return=representation,resolution=ignore-duplicates")
        XCTAssertEqual(ignored.status, 201)
        XCTAssertEqual(ignored.jsonArray.count, 0)
        let name = try await value("SELECT display_name FROM profiles WHERE id = \(alice.id)")
        XCTAssertEqual(name, "Alice", "neither the conflicts nor the ignored duplicate changed the row")
        for query in ["", "?on_conflict=id"] {
            let merged = try post(
                "profiles", ["id": id, "display_name": "Merged\(query.count)"], as: alice,
                prefer: "return=representation,resolution=merge-duplicates", query: query)
            XCTAssertEqual(merged.status, 200, merged.text)
            XCTAssertEqual(merged.jsonArray.first?["display_name"] as? String, "Merged\(query.count)")
        }

        // user_favorites, collections and collection_quotes: the user's rows.
        let favorite = ["user_id": id, "quote_id": quotes[0].uuidString]
        XCTAssertEqual(try post("user_favorites", favorite, as: alice).status, 201)
        let collectionID = UUID().uuidString.lowercased()
        XCTAssertEqual(try post("collections", ["id": collectionID, "name": "Mine"], as: alice).status, 201)
        let entry = ["collection_id": collectionID, "quote_id": quotes[1].uuidString]
        XCTAssertEqual(try post("collection_quotes", entry, as: alice).status, 201)
        try assertConflict(try post("user_favorites", favorite, as: alice), "user_favorites")
        try assertConflict(
            try post("user_favorites", favorite, as: alice, query: "?on_conflict=user_id%2Cquote_id"),
            "user_favorites with on_conflict but no resolution")
        try assertConflict(try post("collections", ["id": collectionID, "name": "Renamed"], as: alice), "collections")
        try assertConflict(try post("collection_quotes", entry, as: alice), "collection_quotes")
        let unmerged = try post(
            "collections", ["id": collectionID, "name": "Ignored"], as: alice,
            prefer: "return=representation,resolution=ignore-duplicates")
        XCTAssertEqual(unmerged.status, 201)
        XCTAssertEqual(unmerged.jsonArray.count, 0)
        let collectionName = try await value("SELECT name FROM collections WHERE id = \(collectionID)::uuid")
        XCTAssertEqual(collectionName, "Mine")
        let renamed = try post(
            "collections", ["id": collectionID, "name": "Renamed"], as: alice,
            prefer: "return=representation,resolution=merge-duplicates")
        XCTAssertEqual(renamed.status, 200)
        XCTAssertEqual(renamed.jsonArray.first?["name"] as? String, "Renamed")
        // The app's favorite upsert (supabase-swift's `upsert(onConflict:)`) keeps working.
        let upserted = try post(
            "user_favorites", favorite, as: alice,
            prefer: "resolution=merge-duplicates,return=representation",
            query: "?on_conflict=user_id%2Cquote_id")
        XCTAssertEqual(upserted.status, 200)
        XCTAssertEqual(upserted.jsonArray.count, 1)
        let rows = try await value(
            """
            SELECT ((SELECT count(*) FROM user_favorites) || '/' || (SELECT count(*) FROM collection_quotes))::text
            """)
        XCTAssertEqual(rows, "1/1")

        // quotes and quote_of_day: the service role's tables.
        let quoteID = quotes[2].uuidString.lowercased()
        let replacement = ["id": quoteID, "text": "Replaced", "author": "X", "category": "love"]
        try assertConflict(try post("quotes", replacement, as: nil), "quotes")
        let text = try await value("SELECT text FROM quotes WHERE id = \(quotes[2])")
        XCTAssertEqual(text, "Three")
        XCTAssertEqual(try post("quote_of_day", ["date": "2031-01-02", "quote_id": quoteID], as: nil).status, 201)
        let otherDay = ["date": "2031-01-02", "quote_id": quotes[1].uuidString]
        try assertConflict(try post("quote_of_day", otherDay, as: nil), "quote_of_day")
        let pinned = try await value("SELECT quote_id::text FROM quote_of_day WHERE date = '2031-01-02'")
        XCTAssertEqual(pinned, quoteID)
        // An upsert merges into a quote, but not into one shown as a quote of the day (kept as shown, as by PATCH).
        let merge = "return=representation,resolution=merge-duplicates"
        let frozen = try post("quotes", replacement, as: nil, prefer: merge)
        XCTAssertEqual(frozen.status, 409)
        XCTAssertEqual(try frozen.jsonObject()["code"] as? String, "55000")
        let kept = try await value("SELECT text FROM quotes WHERE id = \(quotes[2])")
        XCTAssertEqual(kept, "Three")
        let unshown = ["id": quotes[0].uuidString, "text": "Uno", "author": "X", "category": "love"]
        let free = try post("quotes", unshown, as: nil, prefer: merge)
        XCTAssertEqual(free.status, 200, free.text)
        XCTAssertEqual(free.jsonArray.first?["text"] as? String, "Uno")
    }

    func testDeletingOnesProfileChangesNothingAndTheAccountStaysUsable() async throws {
        let password = "correct horse battery"
        let signUp = try app.client.send(
            "POST", "/v1/auth/signup",
            json: ["email": "keeper@x.io", "password": password, "display_name": "Keeper"])
        XCTAssertEqual(signUp.status, 201)
        let session = try signUp.jsonObject()
        let id = try XCTUnwrap((session["user"] as? [String: Any])?["id"] as? String)
        let token = try XCTUnwrap(session["access_token"] as? String)
        let headers = ["apikey": app.anonKey, "Authorization": "Bearer \(token)"]

        // As PostgREST with row-level security and no delete policy: no row is visible to the delete.
        let represented = try app.client.send(
            "DELETE", "/rest/v1/profiles?id=eq.\(id)",
            headers: headers.merging(["Prefer": "return=representation"]) { $1 })
        XCTAssertEqual(represented.status, 200)
        XCTAssertEqual(represented.jsonArray.count, 0)
        XCTAssertEqual(try app.client.send("DELETE", "/rest/v1/profiles?id=eq.\(id)", headers: headers).status, 204)
        XCTAssertEqual(try app.client.send("DELETE", "/rest/v1/profiles?id=not.is.null", headers: headers).status, 204)
        let object = headers.merging(["Accept": "application/vnd.pgrst.object+json"]) { $1 }
        let single = try app.client.send("DELETE", "/rest/v1/profiles?id=eq.\(id)", headers: object)
        XCTAssertEqual(single.status, 406)
        let profiles = try await value("SELECT count(*)::text FROM profiles")
        XCTAssertEqual(profiles, "1")

        // The account is whole: it signs in and reads its profile through both doors.
        let login = try app.client.send("POST", "/v1/auth/login", json: ["email": "keeper@x.io", "password": password])
        XCTAssertEqual(login.status, 200)
        let v1Token = try XCTUnwrap(try login.jsonObject()["access_token"] as? String)
        let me = try app.client.get("/v1/me", headers: ["Authorization": "Bearer \(v1Token)"])
        XCTAssertEqual(me.status, 200)
        XCTAssertEqual(try me.jsonObject()["display_name"] as? String, "Keeper")
        let supabaseLogin = try app.supabase(
            "POST", "/auth/v1/token?grant_type=password",
            body: ["email": "keeper@x.io", "password": password])
        XCTAssertEqual(supabaseLogin.status, 200)
        let supabaseToken = try XCTUnwrap(try supabaseLogin.jsonObject()["access_token"] as? String)
        let supabaseHeaders = ["apikey": app.anonKey, "Authorization": "Bearer \(supabaseToken)"]
        XCTAssertEqual(try app.client.get("/auth/v1/user", headers: supabaseHeaders).status, 200)
        let row = try app.client.get("/rest/v1/profiles?select=%2A&id=eq.\(id)", headers: supabaseHeaders)
        XCTAssertEqual(row.status, 200)
        XCTAssertEqual(row.jsonArray.first?["display_name"] as? String, "Keeper")
        // Signing up again still finds the account (it was never half deleted).
        let again = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": "keeper@x.io", "password": password])
        XCTAssertEqual(again.status, 409)
    }
}
