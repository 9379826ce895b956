import Foundation
import TestSupport
import XCTest

/// `/v1/favorites…`: each user's own favorites, idempotent and safe under concurrency.
final class FavoritesTests: XCTestCase {
    func testAddListIdsAndRemove() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["First", "Second", "Third"])
        for id in quotes {
            let response = try app.client.send(
                "PUT", "/v1/favorites/\(id.uuidString.lowercased())", headers: user.authorization)
            XCTAssertEqual(response.status, 201)
        }
        let again = try app.client.send(
            "PUT", "/v1/favorites/\(quotes[0].uuidString.lowercased())", headers: user.authorization)
        XCTAssertEqual(again.status, 200, "already a favorite")

        let list = try app.client.get("/v1/favorites?page_size=2", headers: user.authorization)
        XCTAssertEqual(list.status, 200)
        let body = try list.jsonObject()
        XCTAssertEqual(body["total"] as? Int, 3)
        XCTAssertEqual(body["has_more"] as? Bool, true)
        let items = try list.items()
        XCTAssertEqual(
            items.map { ($0["quote"] as! [String: Any])["text"] as? String }, ["Third", "Second"],
            "newest favorite first")
        XCTAssertNotNil(items.first?["favorited_at"] as? String)

        let ids = try app.client.get("/v1/favorites/ids", headers: user.authorization).jsonObject()["ids"] as? [String]
        XCTAssertEqual(Set(ids ?? []), Set(quotes.map { $0.uuidString.lowercased() }))

        XCTAssertEqual(
            try app.client.send(
                "DELETE", "/v1/favorites/\(quotes[1].uuidString.lowercased())", headers: user.authorization
            ).status, 204)
        XCTAssertEqual(
            try app.client.send(
                "DELETE", "/v1/favorites/\(quotes[1].uuidString.lowercased())", headers: user.authorization
            ).status, 204,
            "removing again is still 204")
        XCTAssertEqual(
            try app.client.get("/v1/favorites", headers: user.authorization).jsonObject()["total"] as? Int, 2)
    }

    func testTogglingTwiceReturnsToTheStart() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let id = try await app.insertQuotes(["Toggle"])[0].uuidString.lowercased()
        let before = try app.client.get("/v1/favorites/ids", headers: user.authorization).text
        for _ in 0..<2 {
            XCTAssertEqual(try app.client.send("PUT", "/v1/favorites/\(id)", headers: user.authorization).status, 201)
            XCTAssertEqual(
                try app.client.send("DELETE", "/v1/favorites/\(id)", headers: user.authorization).status, 204)
        }
        XCTAssertEqual(try app.client.get("/v1/favorites/ids", headers: user.authorization).text, before)
    }

    func testUnknownQuoteIs404AndChangesNothing() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(UUID().uuidString)", headers: user.authorization).status, 404)
        XCTAssertEqual(try app.client.send("PUT", "/v1/favorites/not-a-uuid", headers: user.authorization).status, 404)
        XCTAssertEqual(
            try app.client.send("DELETE", "/v1/favorites/not-a-uuid", headers: user.authorization).status, 204)
        XCTAssertEqual(
            try app.client.get("/v1/favorites", headers: user.authorization).jsonObject()["total"] as? Int, 0)
    }

    func testFiftyConcurrentAddsMakeOneRowAndOne201() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let id = try await app.insertQuotes(["Popular"])[0].uuidString.lowercased()
        let port = app.application.port
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try HTTPTestClient(port: port).send("PUT", "/v1/favorites/\(id)", headers: user.authorization)
                        .status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses.filter { $0 == 201 }.count, 1)
        XCTAssertEqual(statuses.filter { $0 == 200 }.count, 49)
        let rows = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM user_favorites WHERE user_id = \(user.id)")[0].decode(
                "n", as: Int.self)
        }
        XCTAssertEqual(rows, 1)
    }

    func testUsersNeverSeeOrTouchEachOthersFavorites() async throws {
        let app = try await startTestApp()
        let alice = try await app.makeUser(), bob = try await app.makeUser()
        let quotes = try await app.insertQuotes(["Alice's", "Bob's"])
        _ = try app.client.send("PUT", "/v1/favorites/\(quotes[0].uuidString)", headers: alice.authorization)
        _ = try app.client.send("PUT", "/v1/favorites/\(quotes[1].uuidString)", headers: bob.authorization)
        XCTAssertEqual(
            try app.client.get("/v1/favorites/ids", headers: alice.authorization).jsonObject()["ids"] as? [String],
            [quotes[0].uuidString.lowercased()])
        // Bob deleting "Alice's" quote only affects Bob's (empty) favorite of it.
        XCTAssertEqual(
            try app.client.send("DELETE", "/v1/favorites/\(quotes[0].uuidString)", headers: bob.authorization).status,
            204)
        XCTAssertEqual(
            try app.client.get("/v1/favorites", headers: alice.authorization).jsonObject()["total"] as? Int, 1)
        XCTAssertEqual(
            try app.client.get("/v1/favorites", headers: bob.authorization).items().map {
                ($0["quote"] as! [String: Any])["text"] as? String
            }, ["Bob's"])
    }

    func testEveryFavoritesRouteNeedsAValidToken() async throws {
        let app = try await startTestApp()
        let id = try await app.insertQuotes(["x"])[0].uuidString
        let forged = ["Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"]
        for (method, path) in [
            ("GET", "/v1/favorites"), ("GET", "/v1/favorites/ids"), ("PUT", "/v1/favorites/\(id)"),
            ("DELETE", "/v1/favorites/\(id)"),
        ] {
            for headers in [[:], forged] {
                let response = try app.client.send(method, path, headers: headers)
                XCTAssertEqual(response.status, 401, "\(method) \(path)")
                XCTAssertEqual(try response.jsonObject()["code"] as? String, "unauthorized")
            }
        }
    }

    func testARevokedSessionsTokenIsRefused() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        XCTAssertEqual(try app.client.get("/v1/favorites", headers: user.authorization).status, 200)
        try await app.withConnection {
            try $0.query("UPDATE sessions SET revoked_at = now() WHERE id = \(user.sessionID)")
        }
        XCTAssertEqual(try app.client.get("/v1/favorites", headers: user.authorization).status, 401)
    }
}
