import Foundation
import TestSupport
import XCTest

/// `/v1/collections…`: each user's own named collections.
final class CollectionsTests: XCTestCase {
    private func create(_ app: TestApp, _ user: TestUser, _ name: String) throws -> [String: Any] {
        let response = try app.client.send("POST", "/v1/collections", json: ["name": name], headers: user.authorization)
        XCTAssertEqual(response.status, 201, response.text)
        return try response.jsonObject()
    }

    func testCreateTrimsUnicodeWhitespaceAndAllowsDuplicates() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let collection = try create(app, user, "\u{00A0}\u{2003} Favourites \u{2003}\n")
        XCTAssertEqual(collection["name"] as? String, "Favourites")
        XCTAssertEqual(collection["quote_count"] as? Int, 0)
        XCTAssertNotNil(collection["created_at"] as? String)
        XCTAssertNotNil(collection["updated_at"] as? String)
        let duplicate = try create(app, user, "Favourites")
        XCTAssertNotEqual(duplicate["id"] as? String, collection["id"] as? String)
        let all = try app.client.get("/v1/collections", headers: user.authorization).items()
        XCTAssertEqual(
            all.map { $0["id"] as? String }, [duplicate["id"] as? String, collection["id"] as? String], "newest first")
    }

    func testInvalidNamesAre422AndCreateNothing() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        for body: [String: Any] in [
            ["name": ""], ["name": " \u{00A0}\u{2003}\t"], ["name": String(repeating: "n", count: 101)],
            ["name": 42], [:],
        ] {
            let response = try app.client.send("POST", "/v1/collections", json: body, headers: user.authorization)
            XCTAssertEqual(response.status, 422, "\(body)")
            XCTAssertEqual(try response.errorFields(), ["name"], "\(body)")
        }
        XCTAssertEqual(
            try create(app, user, String(repeating: "n", count: 100))["name"] as? String,
            String(repeating: "n", count: 100))
        let badJSON = try app.client.send(
            "POST", "/v1/collections", headers: user.authorization.merging(["Content-Type": "application/json"]) { $1 },
            body: Array("{name".utf8))
        XCTAssertEqual(badJSON.status, 400)
        XCTAssertEqual(try app.client.get("/v1/collections", headers: user.authorization).items().count, 1)
    }

    func testRenameAddListRemoveAndCounts() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let id = try create(app, user, "Draft")["id"] as! String
        let renamed = try app.client.send(
            "PATCH", "/v1/collections/\(id)", json: ["name": "  Final  "], headers: user.authorization)
        XCTAssertEqual(renamed.status, 200)
        XCTAssertEqual(try renamed.jsonObject()["name"] as? String, "Final")
        let quotes = try await app.insertQuotes(["A", "B", "C"])
        for quote in quotes {
            XCTAssertEqual(
                try app.client.send(
                    "PUT", "/v1/collections/\(id)/quotes/\(quote.uuidString)", headers: user.authorization
                ).status, 201)
        }
        XCTAssertEqual(
            try app.client.send(
                "PUT", "/v1/collections/\(id)/quotes/\(quotes[0].uuidString)", headers: user.authorization
            ).status, 200)
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/collections/\(id)/quotes/\(UUID().uuidString)", headers: user.authorization)
                .status, 404,
            "unknown quote")
        let page = try app.client.get("/v1/collections/\(id)/quotes", headers: user.authorization)
        XCTAssertEqual(try page.jsonObject()["total"] as? Int, 3)
        XCTAssertEqual(try page.items().map { ($0["quote"] as! [String: Any])["text"] as? String }, ["C", "B", "A"])
        XCTAssertNotNil(try page.items().first?["added_at"] as? String)
        XCTAssertEqual(
            try app.client.get("/v1/collections", headers: user.authorization).items().first?["quote_count"] as? Int, 3)
        XCTAssertEqual(
            try app.client.send(
                "DELETE", "/v1/collections/\(id)/quotes/\(quotes[1].uuidString)", headers: user.authorization
            ).status, 204)
        XCTAssertEqual(
            try app.client.send(
                "DELETE", "/v1/collections/\(id)/quotes/\(quotes[1].uuidString)", headers: user.authorization
            ).status, 204)
        XCTAssertEqual(
            try app.client.get("/v1/collections", headers: user.authorization).items().first?["quote_count"] as? Int, 2)
    }

    func testDeletingACollectionLeavesNoAssociationButKeepsTheQuotes() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let id = try create(app, user, "Doomed")["id"] as! String
        let quotes = try await app.insertQuotes(["Stays", "Stays too"])
        for quote in quotes {
            _ = try app.client.send(
                "PUT", "/v1/collections/\(id)/quotes/\(quote.uuidString)", headers: user.authorization)
        }
        XCTAssertEqual(try app.client.send("DELETE", "/v1/collections/\(id)", headers: user.authorization).status, 204)
        XCTAssertEqual(try app.client.send("DELETE", "/v1/collections/\(id)", headers: user.authorization).status, 404)
        XCTAssertEqual(try app.client.get("/v1/collections/\(id)/quotes", headers: user.authorization).status, 404)
        let left = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT (SELECT count(*) FROM collection_quotes)::int8 AS links, \
                (SELECT count(*) FROM quotes)::int8 AS quotes
                """
            )[0]
        }
        XCTAssertEqual(try left.decode("links", as: Int.self), 0)
        XCTAssertEqual(try left.decode("quotes", as: Int.self), 2)
    }

    func testAnotherUsersCollectionIsIndistinguishableFromAMissingOne() async throws {
        let app = try await startTestApp()
        let alice = try await app.makeUser(), bob = try await app.makeUser()
        let aliceID = try create(app, alice, "Alice only")["id"] as! String
        let quote = try await app.insertQuotes(["Q"])[0].uuidString
        _ = try app.client.send("PUT", "/v1/collections/\(aliceID)/quotes/\(quote)", headers: alice.authorization)
        let missing = UUID().uuidString
        for id in [aliceID, missing, "not-a-uuid"] {
            let attempts: [(String, String, [String: Any]?)] = [
                ("PATCH", "/v1/collections/\(id)", ["name": "Bob's now"]),
                ("DELETE", "/v1/collections/\(id)", nil),
                ("GET", "/v1/collections/\(id)/quotes", nil),
                ("PUT", "/v1/collections/\(id)/quotes/\(quote)", nil),
                ("DELETE", "/v1/collections/\(id)/quotes/\(quote)", nil),
            ]
            for (method, path, body) in attempts {
                let response =
                    try body.map { try app.client.send(method, path, json: $0, headers: bob.authorization) }
                    ?? app.client.send(method, path, headers: bob.authorization)
                XCTAssertEqual(response.status, 404, "\(method) \(path)")
                XCTAssertEqual(try response.jsonObject()["code"] as? String, "not_found")
                XCTAssertEqual(
                    try response.jsonObject()["detail"] as? String, "Not found", "the same body for foreign and missing"
                )
            }
        }
        XCTAssertEqual(try app.client.get("/v1/collections", headers: bob.authorization).items().count, 0)
        let aliceView = try app.client.get("/v1/collections", headers: alice.authorization).items()
        XCTAssertEqual(aliceView.first?["name"] as? String, "Alice only")
        XCTAssertEqual(aliceView.first?["quote_count"] as? Int, 1)
    }

    func testConcurrentAddsOfOneQuoteMakeOneAssociation() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let id = try create(app, user, "Race")["id"] as! String
        let quote = try await app.insertQuotes(["Raced"])[0].uuidString
        let port = app.application.port
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try HTTPTestClient(port: port).send(
                        "PUT", "/v1/collections/\(id)/quotes/\(quote)", headers: user.authorization
                    ).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses.filter { $0 == 201 }.count, 1)
        XCTAssertEqual(statuses.filter { $0 == 200 }.count, 49)
    }

    func testCollectionsNeedAToken() async throws {
        let app = try await startTestApp()
        XCTAssertEqual(try app.client.get("/v1/collections").status, 401)
        XCTAssertEqual(try app.client.send("POST", "/v1/collections", json: ["name": "x"]).status, 401)
    }
}
