import Foundation
import PGClient
import QuoteVault
@testable import SupabaseAPI
import TestSupport
import XCTest

/// Attacks on `/rest/v1` and `/storage/v1` that must fail cleanly (a 4xx in the surface's own error shape) and
/// change nothing: taking over another user's rows through an upsert, requests that used to reach a 500, and
/// every bound at its edge and one past it.
final class SupabaseAttackTests: XCTestCase {
    private var app: TestApp!

    override func setUp() async throws { app = try await TestApp.start() }
    override func tearDown() async throws { await app.stop() }

    private func code(_ response: HTTPTestResponse) -> String? { (try? response.jsonObject())?["code"] as? String }

    private func collectionRow(_ id: String) async throws -> (owner: UUID, name: String) {
        try await app.withConnection { connection in
            let row = try connection.query("SELECT user_id, name FROM collections WHERE id = \(id)::uuid")[0]
            return (try row.decode("user_id", as: UUID.self), try row.decode("name", as: String.self))
        }
    }

    private func count(_ sql: PGQuery) async throws -> Int {
        try await app.withConnection { try $0.query(sql)[0].decode("n", as: Int.self) }
    }

    func testAnUpsertCannotTakeOverAnotherUsersRows() async throws {
        let alice = try await app.makeUser(), bob = try await app.makeUser()
        let quote = try await app.insertQuotes(["Attack quote"])[0]
        let created = try app.supabase(
            "POST", "/rest/v1/collections?select=%2A", as: alice, body: ["name": "Alice's"],
            headers: ["Prefer": "return=representation", "Accept": "application/vnd.pgrst.object+json"])
        let id = try XCTUnwrap(try created.jsonObject()["id"] as? String)

        // Bob names Alice's collection (uppercase, as supabase-swift sends ids) in an upsert, both resolutions,
        // with and without on_conflict, with and without his own id as owner.
        for (prefer, query) in [
            ("resolution=merge-duplicates,return=representation", ""),
            ("resolution=merge-duplicates,return=representation", "?on_conflict=id"),
            ("resolution=ignore-duplicates,return=representation", ""),
            ("resolution=merge-duplicates", "?select=%2A"),
        ] {
            for body: [String: Any] in [
                ["id": id.uppercased(), "name": "Bob's now"],
                ["id": id, "name": "Bob's now", "user_id": bob.id.uuidString],
            ] {
                let attack = try app.supabase(
                    "POST", "/rest/v1/collections\(query)", as: bob, body: body, headers: ["Prefer": prefer])
                XCTAssertEqual(attack.status, 403, "\(prefer) \(query) \(body)")
                XCTAssertEqual(code(attack), "42501")
            }
        }
        // In a bulk upsert the one foreign row refuses the whole request: Bob's own new row is not kept either.
        let bulk = try app.supabase(
            "POST", "/rest/v1/collections", as: bob,
            body: [["id": UUID().uuidString, "name": "Bob's own"], ["id": id, "name": "Bob's now"]],
            headers: ["Prefer": "resolution=merge-duplicates"])
        XCTAssertEqual(bulk.status, 403)
        let after = try await collectionRow(id)
        XCTAssertEqual(after.owner, alice.id)
        XCTAssertEqual(after.name, "Alice's")
        let counted1 = try await count("SELECT count(*)::int8 AS n FROM collections WHERE user_id = \(bob.id)")

        XCTAssertEqual(counted1, 0)

        // Through the other tables: Alice's favorites and Alice's collection's quotes.
        let favorite = try app.supabase(
            "POST", "/rest/v1/user_favorites?on_conflict=user_id%2Cquote_id", as: bob,
            body: ["user_id": alice.id.uuidString, "quote_id": quote.uuidString],
            headers: ["Prefer": "resolution=merge-duplicates,return=representation"])
        XCTAssertEqual(favorite.status, 403)
        let entry = try app.supabase(
            "POST", "/rest/v1/collection_quotes", as: bob,
            body: ["collection_id": id, "quote_id": quote.uuidString],
            headers: ["Prefer": "resolution=merge-duplicates,return=representation"])
        XCTAssertEqual(entry.status, 403)
        let counted2 = try await count("SELECT count(*)::int8 AS n FROM collection_quotes")

        XCTAssertEqual(counted2, 0)
        let profile = try app.supabase(
            "POST", "/rest/v1/profiles", as: bob, body: ["id": alice.id.uuidString, "display_name": "pwned"],
            headers: ["Prefer": "resolution=merge-duplicates,return=representation"])
        XCTAssertEqual(profile.status, 403)

        // Alice's own upsert of the same row merges and answers the row as merged (one object when asked).
        let merged = try app.supabase(
            "POST", "/rest/v1/collections?select=%2A", as: alice, body: ["id": id.uppercased(), "name": "Renamed"],
            headers: [
                "Prefer": "resolution=merge-duplicates,return=representation",
                "Accept": "application/vnd.pgrst.object+json",
            ])
        XCTAssertEqual(merged.status, 200)
        XCTAssertEqual(try merged.jsonObject()["name"] as? String, "Renamed")
        XCTAssertEqual(try merged.jsonObject()["id"] as? String, id)
    }

    func testClientShapedErrorsAreFourHundredsWithPostgRESTCodes() async throws {
        let user = try await app.makeUser()
        let isTrue = try app.supabase("GET", "/rest/v1/quotes?id=is.true")
        XCTAssertEqual(isTrue.status, 400)
        XCTAssertEqual(code(isTrue), "42804")
        XCTAssertEqual(try app.supabase("GET", "/rest/v1/quotes?id=not.is.null").status, 200)

        for (query, expected) in [
            ("on_conflict=", "42601"), ("on_conflict=%2C", "42601"), ("on_conflict=name", "42P10"),
            ("on_conflict=id%2Cname", "42P10"), ("on_conflict=nope", "PGRST204"),
        ] {
            let upsert = try app.supabase(
                "POST", "/rest/v1/collections?\(query)", as: user, body: ["name": "x"],
                headers: ["Prefer": "resolution=merge-duplicates"])
            XCTAssertEqual(upsert.status, 400, query)
            XCTAssertEqual(code(upsert), expected, query)
        }
        // Rows naming no column fail as the table's rules say, not as broken SQL.
        let empty = try app.supabase("POST", "/rest/v1/user_favorites", as: user, body: [[String: Any]()])
        XCTAssertEqual(empty.status, 400)
        XCTAssertEqual(code(empty), "23502")
        let counted3 = try await count("SELECT count(*)::int8 AS n FROM collections")

        XCTAssertEqual(counted3, 0)
    }

    func testSelectItemsAreBoundedAtForty() async throws {
        _ = try await app.insertQuotes(["Bounded"])
        let forty = Array(repeating: "text", count: 40).joined(separator: "%2C")
        XCTAssertEqual(try app.supabase("GET", "/rest/v1/quotes?select=\(forty)").status, 200)
        for items in [41, 1_700] {
            let past = try app.supabase(
                "GET", "/rest/v1/quotes?select=" + Array(repeating: "text", count: items).joined(separator: "%2C"))
            XCTAssertEqual(past.status, 400, "\(items) items")
            XCTAssertEqual(code(past), "PGRST100")
            XCTAssertTrue((try past.jsonObject()["message"] as? String ?? "").contains("at most 40 items"))
        }
        // Embeds count with their items.
        let user = try await app.makeUser()
        let nested = "%2A%2Cquotes%28" + Array(repeating: "text", count: 39).joined(separator: "%2C") + "%29"
        XCTAssertEqual(try app.supabase("GET", "/rest/v1/user_favorites?select=\(nested)", as: user).status, 400)
    }

    func testPatternsAreBoundedAtTwoHundredCharacters() async throws {
        _ = try await app.insertQuotes([String(repeating: "a", count: 200)])
        let edge = try app.supabase("GET", "/rest/v1/quotes?text=like.\(String(repeating: "a", count: 200))")
        XCTAssertEqual(edge.status, 200)
        XCTAssertEqual(edge.jsonArray.count, 1)
        for op in ["like", "ilike"] {
            let before = ContinuousClock.now
            let past = try app.supabase("GET", "/rest/v1/quotes?text=\(op).\(String(repeating: "a", count: 201))")
            XCTAssertEqual(past.status, 400, op)
            XCTAssertEqual(code(past), "PGRST100")
            // Past a bound, the refusal waits HTTP_REFUSAL_DELAY (1 s by default): a client looping on it pays with
            // time.
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - before, .seconds(1), op)
        }
        let nested = try app.supabase(
            "GET", "/rest/v1/quotes?or=%28text.ilike.\(String(repeating: "%2A", count: 201))%29")
        XCTAssertEqual(nested.status, 400)
    }

    func testBulkWritesAreBoundedAtAThousandRows() async throws {
        let user = try await app.makeUser()
        let past = try app.supabase(
            "POST", "/rest/v1/collections", as: user, body: (0...1000).map { ["name": "c\($0)"] })
        XCTAssertEqual(past.status, 413)
        XCTAssertEqual(code(past), "54000")
        let empties = try app.supabase(
            "POST", "/rest/v1/collections", as: user, body: Array(repeating: [String: Any](), count: 40_000))
        XCTAssertEqual(empties.status, 413)
        let counted4 = try await count("SELECT count(*)::int8 AS n FROM collections")

        XCTAssertEqual(counted4, 0)
        // The edge, 1,000 rows, as favorites: an account holds at most 200 collections (AccountQuotaTests).
        let quotes: [UUID] = try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quotes (text, author, category)
                SELECT 'Bulk ' || g, 'Author', 'wisdom' FROM generate_series(1, 1000) g RETURNING id
                """
            ).map { try $0.decode("id", as: UUID.self) }
        }
        let rows = quotes.map { ["user_id": user.id.uuidString, "quote_id": $0.uuidString] }
        let edge = try app.supabase("POST", "/rest/v1/user_favorites", as: user, body: rows)
        XCTAssertEqual(edge.status, 201, edge.text)
        let counted5 = try await count("SELECT count(*)::int8 AS n FROM user_favorites WHERE user_id = \(user.id)")

        XCTAssertEqual(counted5, 1000)
    }

    func testSingleObjectWritesTouchingOtherThanOneRowChangeNothing() async throws {
        let user = try await app.makeUser()
        _ = try app.supabase("POST", "/rest/v1/collections", as: user, body: [["name": "one"], ["name": "two"]])
        let object = ["Accept": "application/vnd.pgrst.object+json", "Prefer": "return=representation"]
        let patch = try app.supabase(
            "PATCH", "/rest/v1/collections?user_id=eq.\(user.id.uuidString)", as: user,
            body: ["name": "same"], headers: object)
        XCTAssertEqual(patch.status, 406)
        XCTAssertEqual(code(patch), "PGRST116")
        XCTAssertEqual(try patch.jsonObject()["details"] as? String, "The result contains 2 rows")
        let delete = try app.supabase(
            "DELETE", "/rest/v1/collections?user_id=eq.\(user.id.uuidString)", as: user, headers: object)
        XCTAssertEqual(delete.status, 406)
        let counted6 = try await count("SELECT count(*)::int8 AS n FROM collections WHERE name IN ('one', 'two')")

        XCTAssertEqual(counted6, 2)
        let none = try app.supabase("DELETE", "/rest/v1/collections?name=eq.nothing", as: user, headers: object)
        XCTAssertEqual(none.status, 406)
        XCTAssertEqual(try none.jsonObject()["details"] as? String, "The result contains 0 rows")
        let one = try app.supabase("DELETE", "/rest/v1/collections?name=eq.one", as: user, headers: object)
        XCTAssertEqual(one.status, 200)
        XCTAssertEqual(try one.jsonObject()["name"] as? String, "one")
    }

    func testOddStorageObjectNamesAreRefusedAndStoreNothing() async throws {
        let user = try await app.makeUser()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 32)
        let folder = user.id.uuidString.lowercased()
        func upload(_ name: String) throws -> HTTPTestResponse {
            try app.client.send(
                "POST", "/storage/v1/object/avatars/\(folder)/\(name)",
                headers: app.supabaseHeaders(user, ["Content-Type": "image/png", "x-upsert": "true"]), body: png)
        }
        // One character of 201 Unicode scalars (PostgreSQL counts scalars), invalid UTF-8, a control character,
        // a deeper path, 201 plain characters: the storage API's 400.
        let combining = "e" + String(repeating: "%CC%81", count: 200)
        for name in [combining, "%FF%FE", "a%0Ab", "a%01b", "a/b", String(repeating: "n", count: 201)] {
            let refused = try upload(name)
            XCTAssertEqual(refused.status, 400, name)
            XCTAssertEqual((try? refused.jsonObject())?["statusCode"] as? String, "400", name)
        }
        // Dot segments never reach the bucket (the router does not match them).
        for name in ["..", "."] { XCTAssertEqual(try upload(name).status, 404, name) }
        let counted7 = try await count("SELECT count(*)::int8 AS n FROM avatars")

        XCTAssertEqual(counted7, 0)
        XCTAssertEqual(try upload(String(repeating: "n", count: 200)).status, 200)
        XCTAssertEqual(try upload("e" + String(repeating: "%CC%81", count: 199)).status, 200)
        // Another user's folder stays a row-level-security refusal.
        let other = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(UUID().uuidString.lowercased())/a.png",
            headers: app.supabaseHeaders(user, ["Content-Type": "image/png"]), body: png)
        XCTAssertEqual((try? other.jsonObject())?["statusCode"] as? String, "403")
    }
}

/// How `/rest/v1` answers the database errors a client cannot cause directly but load can: a statement stopped by
/// the server's statement timeout (a real error from PostgreSQL) and an exhausted pool.
final class SupabaseDatabaseErrorTests: XCTestCase {
    private struct StatementNotStopped: Error {}

    func testAStatementTimeoutAndAnExhaustedPoolAreBoth503() async throws {
        let app = try await startTestApp()
        let timeout: PGError = try await app.withConnection { connection in
            try connection.query("SET statement_timeout = '10ms'")
            defer { _ = try? connection.query("RESET statement_timeout") }
            do {
                try connection.query("SELECT pg_sleep(1)")
                throw StatementNotStopped()
            } catch let error as PGError {
                return error
            }
        }
        XCTAssertEqual(timeout.sqlState?.rawValue, "57014")
        let answer = RestError.from(Failure(classifying: timeout), anonymous: false).response
        XCTAssertEqual(answer.status, 503, "the same status as on every other surface")
        XCTAssertEqual(answer.headers["Retry-After"], "1")
        let body = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        XCTAssertEqual(body["code"] as? String, "57014")
        XCTAssertNotNil(body["message"] as? String)

        let exhausted = RestError.from(
            Failure(classifying: PGError(kind: .poolExhausted, message: "no connection")), anonymous: true
        ).response
        XCTAssertEqual(exhausted.status, 503)
        XCTAssertEqual(exhausted.headers["Retry-After"], "1")
    }
}
