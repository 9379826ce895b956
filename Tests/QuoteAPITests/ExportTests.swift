import Foundation
import TestSupport
import XCTest

/// `GET /v1/me/export`: a person's own data, whole, and nobody else's.
final class ExportTests: XCTestCase {
    func testExportHoldsProfilePreferencesFavoritesAndCollectionsOfTheCallerOnly() async throws {
        let app = try await startTestApp()
        let quotes = try await app.insertQuotes(["Export one", "Export two", "Export three"])
        let owner = try await app.makeUser()
        let other = try await app.makeUser()
        let patch = try app.client.send(
            "PATCH", "/v1/me",
            json: [
                "display_name": "Ada", "preferences": ["color_scheme": "dark", "font_size": "large"],
            ], headers: owner.authorization)
        XCTAssertEqual(patch.status, 200, patch.text)
        for id in [quotes[1], quotes[0]] {
            XCTAssertEqual(
                try app.client.send(
                    "PUT", "/v1/favorites/\(id.uuidString.lowercased())",
                    headers: owner.authorization
                ).status / 100, 2)
        }
        XCTAssertEqual(
            try app.client.send(
                "PUT", "/v1/favorites/\(quotes[2].uuidString.lowercased())",
                headers: other.authorization
            ).status / 100, 2)
        let created = try app.client.send(
            "POST", "/v1/collections", json: ["name": "Mornings"], headers: owner.authorization)
        let collectionID = try XCTUnwrap(created.jsonObject()["id"] as? String)
        let added = try app.client.send(
            "PUT", "/v1/collections/\(collectionID)/quotes/\(quotes[2].uuidString.lowercased())",
            headers: owner.authorization)
        XCTAssertEqual(added.status, 201, added.text)
        _ = try app.client.send("POST", "/v1/collections", json: ["name": "Not mine"], headers: other.authorization)

        let response = try app.client.get("/v1/me/export", headers: owner.authorization)
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertTrue(response.header("Content-Disposition")?.hasPrefix("attachment") == true)
        let export = try response.jsonObject()
        XCTAssertNotNil(export["exported_at"] as? String)
        let user = try XCTUnwrap(export["user"] as? [String: Any])
        XCTAssertEqual(user["email"] as? String, owner.email)
        XCTAssertEqual(user["display_name"] as? String, "Ada")
        let preferences = try XCTUnwrap(user["preferences"] as? [String: Any])
        XCTAssertEqual(preferences["color_scheme"] as? String, "dark")
        XCTAssertEqual(preferences["font_size"] as? String, "large")
        // Oldest first, with the quote itself so the export stands alone.
        let favorites = try XCTUnwrap(export["favorites"] as? [[String: Any]])
        XCTAssertEqual(
            favorites.map { $0["quote_id"] as? String }, [quotes[1], quotes[0]].map { $0.uuidString.lowercased() })
        XCTAssertEqual(favorites.map { $0["text"] as? String }, ["Export two", "Export one"])
        XCTAssertEqual(favorites.first?["author"] as? String, "Test Author")
        XCTAssertNotNil((favorites.first?["added_at"] as? String).flatMap(BackupTimeText.parse))
        let collections = try XCTUnwrap(export["collections"] as? [[String: Any]])
        XCTAssertEqual(collections.map { $0["name"] as? String }, ["Mornings"], "only the caller's collections")
        let inCollection = try XCTUnwrap(collections.first?["quotes"] as? [[String: Any]])
        XCTAssertEqual(inCollection.map { $0["quote_id"] as? String }, [quotes[2].uuidString.lowercased()])
        XCTAssertEqual(inCollection.first?["text"] as? String, "Export three")

        // A new account exports empty lists; without a token there is nothing.
        let empty = try app.client.get("/v1/me/export", headers: (try await app.makeUser()).authorization).jsonObject()
        XCTAssertEqual((empty["favorites"] as? [Any])?.count, 0)
        XCTAssertEqual((empty["collections"] as? [Any])?.count, 0)
        let anonymous = try app.client.get("/v1/me/export")
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertTrue(anonymous.header("Content-Type")?.hasPrefix("application/problem+json") == true)
    }
}

/// The API's timestamps: `2026-11-25T14:42:24.123Z`.
private enum BackupTimeText {
    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return text.count == 24 ? formatter.date(from: text) : nil
    }
}
