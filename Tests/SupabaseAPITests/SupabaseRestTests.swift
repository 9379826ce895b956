import Foundation
import PGClient
import TestSupport
import XCTest

/// `/rest/v1`: PostgREST's grammar, shapes and statuses, and Supabase's row rules checked with two users.
final class SupabaseRestTests: XCTestCase {
    private var app: TestApp!
    private var quoteIDs: [UUID] = []

    override func setUp() async throws {
        app = try await TestApp.start()
        quoteIDs = try await app.insertQuotes((0..<10).map { "Quote \($0) about life" }, author: "Mark Twain")
        quoteIDs += try await app.insertQuotes(
            (0..<3).map { "Another \($0) on love" }, author: "Jane Austen", category: "love")
    }

    override func tearDown() async throws { await app.stop() }

    private func count(_ table: String) async throws -> Int {
        try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM \(unsafeSQL: table)")[0].decode("n", as: Int.self)
        }
    }

    func testQuoteReadsFilterOrderCountAndRange() throws {
        let page = try app.supabase(
            "GET", "/rest/v1/quotes?select=%2A&category=eq.love&order=created_at.desc&offset=0&limit=2",
            headers: ["Prefer": "count=exact"])
        XCTAssertEqual(page.status, 206)
        XCTAssertEqual(page.header("Content-Range"), "0-1/5")
        XCTAssertEqual(page.jsonArray.count, 2)
        XCTAssertTrue(page.jsonArray.allSatisfy { $0["category"] as? String == "love" })
        let dates = page.jsonArray.compactMap { $0["created_at"] as? String }
        XCTAssertEqual(dates, dates.sorted(by: >))
        XCTAssertTrue(dates.allSatisfy { $0.contains("T") }, "ISO-8601 with T")

        let head = try app.client.send(
            "HEAD", "/rest/v1/quotes?select=%2A&category=eq.love",
            headers: app.supabaseHeaders(nil, ["Prefer": "count=exact"]))
        XCTAssertEqual(head.header("Content-Range"), "0-4/5")

        let author = try app.supabase("GET", "/rest/v1/quotes?select=%2A&author=ilike.%2Atwain%2A")
        XCTAssertEqual(author.jsonArray.count, 10)
        let either = try app.supabase(
            "GET", "/rest/v1/quotes?select=%2A&or=%28text.ilike.%2Alove%2A%2Cauthor.ilike.%2Aausten%2A%29")
        XCTAssertEqual(either.jsonArray.count, 3)
        let some = try app.supabase(
            "GET", "/rest/v1/quotes?select=id&id=in.%28\(quoteIDs[0].uuidString)%2C\(quoteIDs[1].uuidString)%29")
        XCTAssertEqual(
            Set(some.jsonArray.compactMap { $0["id"] as? String }),
            Set(quoteIDs[0...1].map { $0.uuidString.lowercased() }))
        XCTAssertEqual(some.jsonArray.first?.keys.sorted(), ["id"])
        let columns = try app.supabase(
            "GET", "/rest/v1/quotes?select=id%2Ctext%2Cauthor&order=created_at.desc.nullslast%2Cid.asc&limit=5")
        XCTAssertEqual(columns.jsonArray.count, 5)
        XCTAssertEqual(columns.jsonArray.first?.keys.sorted(), ["author", "id", "text"])
        let negated = try app.supabase("GET", "/rest/v1/quotes?select=%2A&category=neq.love&author=not.is.null")
        XCTAssertEqual(negated.jsonArray.count, 8)

        let none = try app.supabase(
            "GET", "/rest/v1/quotes?select=%2A&author=eq.Nobody",
            headers: ["Accept": "application/vnd.pgrst.object+json"])
        XCTAssertEqual(none.status, 406)
        XCTAssertEqual(try none.jsonObject()["code"] as? String, "PGRST116")
        XCTAssertEqual(try none.jsonObject()["details"] as? String, "The result contains 0 rows")
        let one = try app.supabase(
            "GET", "/rest/v1/quotes?select=%2A&id=eq.\(quoteIDs[0])",
            headers: ["Accept": "application/vnd.pgrst.object+json"])
        XCTAssertEqual(try one.jsonObject()["id"] as? String, quoteIDs[0].uuidString.lowercased())
        let beyond = try app.supabase("GET", "/rest/v1/quotes?select=%2A&offset=50", headers: ["Prefer": "count=exact"])
        XCTAssertEqual(beyond.status, 416)
        XCTAssertEqual(beyond.header("Content-Range"), "*/13")
    }

    func testRowRulesWithTwoUsers() async throws {
        let alice = try await app.makeUser(), bob = try await app.makeUser()
        let favorite = try app.supabase(
            "POST", "/rest/v1/user_favorites", as: alice,
            body: ["user_id": alice.id.uuidString, "quote_id": quoteIDs[0].uuidString],
            headers: ["Prefer": "return=representation"])
        XCTAssertEqual(favorite.status, 201)
        XCTAssertEqual(favorite.jsonArray.first?["user_id"] as? String, alice.id.uuidString.lowercased())

        // Bob cannot write as Alice, read her rows, or change them.
        let forged = try app.supabase(
            "POST", "/rest/v1/user_favorites", as: bob,
            body: ["user_id": alice.id.uuidString, "quote_id": quoteIDs[1].uuidString])
        XCTAssertEqual(forged.status, 403)
        XCTAssertEqual(try forged.jsonObject()["code"] as? String, "42501")
        XCTAssertEqual(
            try app.supabase("GET", "/rest/v1/user_favorites?select=%2A&user_id=eq.\(alice.id)", as: bob).jsonArray
                .count, 0)
        let deleted = try app.supabase(
            "DELETE", "/rest/v1/user_favorites?user_id=eq.\(alice.id)", as: bob,
            headers: ["Prefer": "return=representation"])
        XCTAssertEqual(deleted.status, 200)
        XCTAssertEqual(deleted.jsonArray.count, 0)
        let embedded = try app.supabase(
            "GET", "/rest/v1/user_favorites?select=%2A%2Cquotes%28%2A%29&user_id=eq.\(alice.id)", as: alice)
        XCTAssertEqual(embedded.jsonArray.count, 1, "Bob's delete removed nothing")
        XCTAssertEqual(
            (embedded.jsonArray.first?["quotes"] as? [String: Any])?["id"] as? String,
            quoteIDs[0].uuidString.lowercased())

        // The anonymous role sees no private rows and writes nothing.
        XCTAssertEqual(try app.supabase("GET", "/rest/v1/user_favorites?select=%2A").jsonArray.count, 0)
        let anonymousWrite = try app.supabase(
            "POST", "/rest/v1/user_favorites", body: ["quote_id": quoteIDs[2].uuidString])
        XCTAssertEqual(anonymousWrite.status, 401)
        XCTAssertEqual(try anonymousWrite.jsonObject()["code"] as? String, "42501")

        // Collections and their quotes: only through one's own collections.
        let collection = try app.supabase(
            "POST", "/rest/v1/collections", as: alice, body: ["name": "  Faves  "],
            headers: ["Prefer": "return=representation"]
        ).jsonArray.first
        let collectionID = try XCTUnwrap(collection?["id"] as? String)
        XCTAssertEqual(collection?["name"] as? String, "Faves", "the service's trimming rule")
        let intoTheirs = try app.supabase(
            "POST", "/rest/v1/collection_quotes", as: bob,
            body: ["collection_id": collectionID, "quote_id": quoteIDs[3].uuidString])
        XCTAssertEqual(intoTheirs.status, 403)
        XCTAssertEqual(try intoTheirs.jsonObject()["code"] as? String, "42501")
        let renamed = try app.supabase(
            "PATCH", "/rest/v1/collections?id=eq.\(collectionID)", as: bob, body: ["name": "Mine"],
            headers: ["Prefer": "return=representation"])
        XCTAssertEqual(renamed.jsonArray.count, 0)
        XCTAssertEqual(
            try app.supabase(
                "POST", "/rest/v1/collection_quotes", as: alice,
                body: [
                    ["collection_id": collectionID, "quote_id": quoteIDs[3].uuidString],
                    ["collection_id": collectionID, "quote_id": quoteIDs[4].uuidString],
                ]
            ).status, 201)
        let tree = try app.supabase(
            "GET", "/rest/v1/collections?select=%2A%2Ccollection_quotes%28%2A%2Cquotes%28%2A%29%29", as: alice)
        XCTAssertEqual(tree.jsonArray.first?["name"] as? String, "Faves")
        XCTAssertEqual((tree.jsonArray.first?["collection_quotes"] as? [[String: Any]])?.count, 2)
        XCTAssertEqual(try app.supabase("GET", "/rest/v1/collection_quotes?select=%2A", as: bob).jsonArray.count, 0)
        // Bob cannot move his own collection quote into Alice's collection either.
        let bobsCollection = try XCTUnwrap(
            try app.supabase(
                "POST", "/rest/v1/collections", as: bob, body: ["name": "Bob's"],
                headers: ["Prefer": "return=representation"]
            ).jsonArray.first?["id"] as? String)
        XCTAssertEqual(
            try app.supabase(
                "POST", "/rest/v1/collection_quotes", as: bob,
                body: ["collection_id": bobsCollection, "quote_id": quoteIDs[5].uuidString]
            ).status, 201)
        let moved = try app.supabase(
            "PATCH", "/rest/v1/collection_quotes?collection_id=eq.\(bobsCollection)", as: bob,
            body: ["collection_id": collectionID])
        XCTAssertEqual(moved.status, 403)
        XCTAssertEqual(try moved.jsonObject()["code"] as? String, "42501")
        XCTAssertEqual((tree.jsonArray.first?["collection_quotes"] as? [[String: Any]])?.count, 2)
        let aliceTree = try app.supabase(
            "GET", "/rest/v1/collection_quotes?select=%2A&collection_id=eq.\(collectionID)", as: alice)
        XCTAssertEqual(aliceTree.jsonArray.count, 2, "nothing was moved into Alice's collection")

        // Profiles: one's own row only.
        XCTAssertEqual(
            try app.supabase("GET", "/rest/v1/profiles?select=%2A&id=eq.\(alice.id)", as: bob).jsonArray.count, 0)
        let patched = try app.supabase(
            "PATCH", "/rest/v1/profiles?id=eq.\(alice.id)", as: bob, body: ["display_name": "Bob was here"])
        XCTAssertEqual(patched.status, 204)
        let own = try app.supabase(
            "GET", "/rest/v1/profiles?select=%2A&id=eq.\(alice.id)", as: alice,
            headers: ["Accept": "application/vnd.pgrst.object+json"])
        XCTAssertNotEqual(try own.jsonObject()["display_name"] as? String, "Bob was here")

        // Quotes are read-only for everyone.
        let quoteWrite = try app.supabase(
            "POST", "/rest/v1/quotes", as: alice, body: ["text": "x", "author": "y", "category": "love"])
        XCTAssertEqual(quoteWrite.status, 403)
    }

    func testWritesThroughTheServicesRules() async throws {
        let alice = try await app.makeUser()
        let profile = try app.supabase(
            "PATCH", "/rest/v1/profiles?id=eq.\(alice.id)", as: alice,
            body: ["display_name": "Alice B", "preferences": ["color_scheme": "dark"]],
            headers: ["Prefer": "return=representation"])
        XCTAssertEqual(profile.status, 200)
        XCTAssertEqual(profile.jsonArray.first?["display_name"] as? String, "Alice B")
        XCTAssertEqual((profile.jsonArray.first?["preferences"] as? [String: Any])?["color_scheme"] as? String, "dark")
        let me = try app.client.get("/v1/me", headers: alice.authorization).jsonObject()
        XCTAssertEqual(me["display_name"] as? String, "Alice B", "the same data as /v1/me")

        let badTheme = try app.supabase(
            "PATCH", "/rest/v1/profiles?id=eq.\(alice.id)", as: alice,
            body: ["preferences": ["color_scheme": "neon"]])
        XCTAssertEqual(badTheme.status, 400)
        let blank = try app.supabase("POST", "/rest/v1/collections", as: alice, body: ["name": "   "])
        XCTAssertEqual(blank.status, 400)
        let collectionsAfterBlank = try await count("collections")
        XCTAssertEqual(collectionsAfterBlank, 0)

        let body = ["user_id": alice.id.uuidString, "quote_id": quoteIDs[0].uuidString]
        XCTAssertEqual(try app.supabase("POST", "/rest/v1/user_favorites", as: alice, body: body).status, 201)
        let duplicate = try app.supabase("POST", "/rest/v1/user_favorites", as: alice, body: body)
        XCTAssertEqual(duplicate.status, 409)
        XCTAssertEqual(try duplicate.jsonObject()["code"] as? String, "23505")
        let ignored = try app.supabase(
            "POST", "/rest/v1/user_favorites?on_conflict=user_id%2Cquote_id", as: alice, body: body,
            headers: ["Prefer": "return=representation,resolution=ignore-duplicates"])
        XCTAssertEqual(ignored.status, 201)
        XCTAssertEqual(ignored.jsonArray.count, 0)
        let favorites =
            try app.client.get("/v1/favorites/ids", headers: alice.authorization).jsonObject()["ids"] as? [String]
        XCTAssertEqual(favorites, [quoteIDs[0].uuidString.lowercased()], "the same data as /v1/favorites")
    }

    func testUnfilteredChangesAreRefusedAndChangeNothing() async throws {
        let alice = try await app.makeUser()
        XCTAssertEqual(try app.supabase("POST", "/rest/v1/collections", as: alice, body: ["name": "Keep"]).status, 201)
        let patch = try app.supabase("PATCH", "/rest/v1/collections", as: alice, body: ["name": "Gone"])
        XCTAssertEqual(patch.status, 400)
        XCTAssertEqual(try patch.jsonObject()["code"] as? String, "21000")
        let delete = try app.supabase("DELETE", "/rest/v1/collections", as: alice, body: [String: Any]())
        XCTAssertEqual(delete.status, 400)
        XCTAssertEqual(try delete.jsonObject()["message"] as? String, "DELETE requires a WHERE clause")
        let names = try app.supabase("GET", "/rest/v1/collections?select=name", as: alice).jsonArray.compactMap {
            $0["name"] as? String
        }
        XCTAssertEqual(names, ["Keep"])
    }

    func testHostileInputIsRefusedAndChangesNothing() async throws {
        let alice = try await app.makeUser()
        let cases: [(String, Int, String)] = [
            ("/rest/v1/quotes?select=%2A&secret=eq.1", 400, "PGRST204"),
            ("/rest/v1/quotes?select=id%3Bdrop%20table%20quotes", 400, "PGRST100"),
            ("/rest/v1/quotes?select=%2A&id=eq.not-a-uuid", 400, "22P02"),
            ("/rest/v1/quotes?select=%2A&or=%28text.eq.a", 400, "PGRST100"),
            ("/rest/v1/quotes?select=%2A&order=id%3Bselect", 400, "PGRST100"),
            ("/rest/v1/quotes?select=%2A&text=regex.x", 400, "PGRST100"),
            ("/rest/v1/quotes?select=%2A%2Cusers%28%2A%29", 400, "PGRST200"),
            ("/rest/v1/users?select=%2A", 404, "PGRST205"),
            ("/rest/v1/pg_catalog.pg_user?select=%2A", 404, "PGRST205"),
            (
                "/rest/v1/quotes?select=%2A&id=in.%28" + Array(repeating: "x", count: 1001).joined(separator: "%2C")
                    + "%29", 400, "PGRST100"
            ),
        ]
        for (path, status, code) in cases {
            let response = try app.supabase("GET", path, as: alice)
            XCTAssertEqual(response.status, status, path)
            XCTAssertEqual(try response.jsonObject()["code"] as? String, code, path)
            XCTAssertNotNil(try response.jsonObject()["message"] as? String, path)
        }
        let unknownColumn = try app.supabase(
            "POST", "/rest/v1/collections", as: alice, body: ["name": "x", "owner": "me"])
        XCTAssertEqual(try unknownColumn.jsonObject()["code"] as? String, "PGRST204")
        let notJSON = try app.client.send(
            "POST", "/rest/v1/collections", headers: app.supabaseHeaders(alice, ["Content-Type": "application/json"]),
            body: Array("{nope".utf8))
        XCTAssertEqual(notJSON.status, 400)
        let quotes = try await count("quotes"), collections = try await count("collections")
        XCTAssertEqual(quotes, 13)
        XCTAssertEqual(collections, 0)
    }

    func testKeysAndTokens() async throws {
        let noKey = try app.client.get("/rest/v1/quotes?select=%2A")
        XCTAssertEqual(noKey.status, 401)
        let alice = try await app.makeUser()
        let now = Int(Date().timeIntervalSince1970)
        let expired = try app.application.context.signer.sign(
            .init(
                sub: alice.id.uuidString.lowercased(), sid: alice.sessionID.uuidString.lowercased(), email: alice.email,
                iat: now - 120, exp: now - 60, role: "authenticated"))
        let refused = try app.client.get(
            "/rest/v1/user_favorites?select=%2A",
            headers: ["apikey": app.anonKey, "Authorization": "Bearer \(expired)"])
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(try refused.jsonObject()["code"] as? String, "PGRST303")
        let otherSchema = try app.supabase("GET", "/rest/v1/quotes?select=%2A", headers: ["Accept-Profile": "auth"])
        XCTAssertEqual(otherSchema.status, 406)
        XCTAssertEqual(try otherSchema.jsonObject()["code"] as? String, "PGRST106")
        XCTAssertEqual(
            try app.supabase("GET", "/rest/v1/quotes?select=id&limit=1", headers: ["Accept-Profile": "public"]).status,
            200)
        let forged = try app.client.get(
            "/rest/v1/quotes?select=%2A", headers: ["apikey": app.anonKey, "Authorization": "Bearer a.b.c"])
        XCTAssertEqual(try forged.jsonObject()["code"] as? String, "PGRST301")
    }

    func testQuoteOfTheDayThroughRPCAndTable() async throws {
        let rpc = try app.supabase("POST", "/rest/v1/rpc/get_quote_of_the_day", body: [String: Any]())
        XCTAssertEqual(rpc.status, 200)
        let id = try XCTUnwrap(try rpc.jsonObject()["id"] as? String)
        let today = try app.supabase("GET", "/rest/v1/quote_of_day?select=%2A%2Cquotes%28%2A%29&quote_id=eq.\(id)")
            .jsonArray
        XCTAssertEqual((today.first?["quotes"] as? [String: Any])?["id"] as? String, id)
        XCTAssertEqual(try app.supabase("POST", "/rest/v1/rpc/drop_everything", body: [String: Any]()).status, 404)
    }
}
