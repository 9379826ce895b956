import Foundation
import TestSupport
import XCTest

/// Per-account quotas (issue 30, item 3): 200 collections per account and 1,000 quotes per collection, whichever
/// door writes them; past a quota `403` (`quota_exceeded` on `/v1` and in a sync batch's result, `QV001` on
/// `/rest/v1`) and nothing written.
final class AccountQuotaTests: XCTestCase {
    private func count(_ app: TestApp, _ sql: String, _ id: UUID) async throws -> Int {
        try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM \(unsafeSQL: sql) = \(id)")[0].decode("n", as: Int.self)
        }
    }

    private func syncResult(_ app: TestApp, _ user: TestUser, _ operation: [String: Any]) throws -> [String: Any] {
        let answer = try app.client.push(user, [operation.merging(["id": lower(UUID())]) { $1 }])
        XCTAssertEqual(answer.status, 200, answer.text)
        return (try answer.jsonObject()["results"] as? [[String: Any]])?.first ?? [:]
    }

    func testAnAccountHoldsAtMost200CollectionsThroughEveryDoor() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO collections (user_id, name) SELECT \(user.id), 'Bulk ' || g FROM generate_series(1, 198) g
                """)
        }
        // The 199th and 200th are the edge: accepted.
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/collections", json: ["name": "199th"],
                headers: user.authorization
            ).status, 201)
        let edge = try app.supabase(
            "POST", "/rest/v1/collections", as: user, body: ["name": "200th"],
            headers: ["Prefer": "return=representation"])
        XCTAssertEqual(edge.status, 201, edge.text)
        let existing = try XCTUnwrap(edge.jsonArray.first?["id"] as? String)

        let v1 = try app.client.send("POST", "/v1/collections", json: ["name": "201st"], headers: user.authorization)
        XCTAssertEqual(v1.status, 403, v1.text)
        XCTAssertEqual(try v1.jsonObject()["code"] as? String, "quota_exceeded")
        XCTAssertTrue((try v1.jsonObject()["detail"] as? String)?.contains("200") ?? false, v1.text)
        let rest = try app.supabase("POST", "/rest/v1/collections", as: user, body: ["name": "201st"])
        XCTAssertEqual(rest.status, 403, rest.text)
        XCTAssertEqual(try rest.jsonObject()["code"] as? String, "QV001")
        XCTAssertNotNil(try rest.jsonObject()["message"] as? String)
        let synced = try syncResult(
            app, user,
            [
                "op": "collection.create", "collection_id": lower(UUID()),
                "name": "201st",
            ])
        XCTAssertEqual(synced["status"] as? Int, 403)
        XCTAssertEqual(synced["code"] as? String, "quota_exceeded")
        let total = try await count(app, "collections WHERE user_id", user.id)
        XCTAssertEqual(total, 200, "nothing written past the quota")

        // Rewriting a collection one holds adds nothing: still allowed at the quota.
        let upsert = try app.supabase(
            "POST", "/rest/v1/collections", as: user,
            body: ["id": existing, "name": "Renamed"],
            headers: ["Prefer": "resolution=merge-duplicates"])
        XCTAssertLessThan(upsert.status, 300, upsert.text)
        // Another account is not affected.
        let other = try await app.makeUser()
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/collections", json: ["name": "Mine"],
                headers: other.authorization
            ).status, 201)
    }

    func testACollectionHoldsAtMost1000QuotesThroughEveryDoor() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let created = try app.client.send(
            "POST", "/v1/collections", json: ["name": "Full"],
            headers: user.authorization)
        let collection = try XCTUnwrap(UUID(uuidString: try created.jsonObject()["id"] as? String ?? ""))
        let quotes: [UUID] = try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quotes (text, author, category)
                SELECT 'Quota quote ' || g, 'Author', 'wisdom' FROM generate_series(1, 1003) g RETURNING id
                """
            ).map { try $0.decode("id", as: UUID.self) }
        }
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO collection_quotes (collection_id, quote_id)
                SELECT \(collection), unnest(\(Array(quotes[..<999])))
                """)
        }
        // The 1,000th is the edge: accepted; adding one already there adds nothing.
        let path = "/v1/collections/\(lower(collection))/quotes"
        for quote in [quotes[999], quotes[0]] {
            let added = try app.client.send("PUT", "\(path)/\(lower(quote))", headers: user.authorization)
            XCTAssertLessThan(added.status, 300, added.text)
        }

        let v1 = try app.client.send("PUT", "\(path)/\(lower(quotes[1000]))", headers: user.authorization)
        XCTAssertEqual(v1.status, 403, v1.text)
        XCTAssertEqual(try v1.jsonObject()["code"] as? String, "quota_exceeded")
        let rest = try app.supabase(
            "POST", "/rest/v1/collection_quotes", as: user,
            body: ["collection_id": lower(collection), "quote_id": lower(quotes[1001])])
        XCTAssertEqual(rest.status, 403, rest.text)
        XCTAssertEqual(try rest.jsonObject()["code"] as? String, "QV001")
        let synced = try syncResult(
            app, user,
            [
                "op": "collection.add_quote", "collection_id": lower(collection),
                "quote_id": lower(quotes[1002]),
            ])
        XCTAssertEqual(synced["status"] as? Int, 403)
        XCTAssertEqual(synced["code"] as? String, "quota_exceeded")
        let total = try await count(app, "collection_quotes WHERE collection_id", collection)
        XCTAssertEqual(total, 1000, "nothing written past the quota")
    }

    func testAnAccountKeepsAtMost50000SyncResults() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO sync_operations (user_id, id, status)
                SELECT \(user.id), gen_random_uuid(), 204 FROM generate_series(1, 49999)
                """)
        }
        let edge = ["id": lower(UUID()), "op": "collection.create", "collection_id": lower(UUID()), "name": "Edge"]
        let kept = try app.client.push(user, [edge])
        XCTAssertEqual(kept.status, 200, "the 50,000th result is kept: \(kept.text)")
        let past = try app.client.push(
            user,
            [
                [
                    "id": lower(UUID()), "op": "collection.create",
                    "collection_id": lower(UUID()), "name": "Past",
                ]
            ])
        XCTAssertEqual(past.status, 403, past.text)
        XCTAssertEqual(try past.jsonObject()["code"] as? String, "quota_exceeded")
        XCTAssertEqual(
            try app.client.get("/v1/collections", headers: user.authorization).items().count, 1,
            "the refused batch applied nothing")
        let total = try await count(app, "sync_operations WHERE user_id", user.id)
        XCTAssertEqual(total, 50_000)
        let replayed = try app.client.push(user, [edge])
        XCTAssertEqual(replayed.status, 200, "an operation already applied still answers its result")
    }
}
