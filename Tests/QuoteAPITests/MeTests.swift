import Foundation
import TestSupport
import XCTest

/// `/v1/me…` and `/v1/avatars/{user_id}`.
final class MeTests: XCTestCase {
    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64)
    private static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 9, count: 64)

    private func signUp(_ app: TestApp, _ email: String) throws -> [String: String] {
        let session = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": email, "password": "correct horse"]
        ).jsonObject()
        return ["Authorization": "Bearer \(session["access_token"] as! String)"]
    }

    func testPatchMergesFieldByField() async throws {
        let app = try await startTestApp()
        let auth = try signUp(app, "me@x.io")
        let first = try app.client.send(
            "PATCH", "/v1/me",
            json: [
                "display_name": "Grace",
                "preferences": ["color_scheme": "dark", "accent_color": "pink", "unknown_key": 1],
            ], headers: auth)
        XCTAssertEqual(first.status, 200, first.text)
        let second = try app.client.send(
            "PATCH", "/v1/me",
            json: [
                "preferences": [
                    "font_size": "extraLarge", "notification_time": "07:30",
                    "notification_enabled": true,
                ]
            ], headers: auth)
        let user = try second.jsonObject()
        XCTAssertEqual(user["display_name"] as? String, "Grace", "absent fields stay")
        let preferences = try XCTUnwrap(user["preferences"] as? [String: Any])
        XCTAssertEqual(preferences["color_scheme"] as? String, "dark")
        XCTAssertEqual(preferences["accent_color"] as? String, "pink")
        XCTAssertEqual(preferences["font_size"] as? String, "extraLarge")
        XCTAssertEqual(preferences["notification_time"] as? String, "07:30")
        XCTAssertEqual(preferences["notification_enabled"] as? Bool, true)
        XCTAssertNil(preferences["unknown_key"])
        let reset = try app.client.send(
            "PATCH", "/v1/me", json: ["display_name": NSNull(), "preferences": ["accent_color": NSNull()]],
            headers: auth)
        let after = try reset.jsonObject()
        XCTAssertTrue(after["display_name"] is NSNull)
        XCTAssertEqual(
            (after["preferences"] as? [String: Any])?["accent_color"] as? String, "blue", "null resets to the default")
        XCTAssertEqual((after["preferences"] as? [String: Any])?["color_scheme"] as? String, "dark")
        let stored = try await app.withConnection {
            try $0.query("SELECT preferences::text FROM profiles")[0].decode(at: 0, as: String.self)
        }
        XCTAssertFalse(stored.contains("unknown_key"), "unknown keys are not stored")
        XCTAssertEqual(try app.client.get("/v1/me", headers: auth).jsonObject()["email"] as? String, "me@x.io")
    }

    func testInvalidPatchesAre422AndChangeNothing() async throws {
        let app = try await startTestApp()
        let auth = try signUp(app, "strict@x.io")
        let before = try app.client.get("/v1/me", headers: auth).text
        let cases: [([String: Any], String)] = [
            (["preferences": ["accent_color": "red"]], "preferences.accent_color"),
            (["preferences": ["font_size": "huge"]], "preferences.font_size"),
            (["preferences": ["color_scheme": "blue"]], "preferences.color_scheme"),
            (["preferences": ["notification_time": "24:00"]], "preferences.notification_time"),
            (["preferences": ["notification_time": "7:30"]], "preferences.notification_time"),
            (["preferences": ["notification_enabled": 1]], "preferences.notification_enabled"),
            (["display_name": String(repeating: "x", count: 101)], "display_name"),
            (["display_name": 5], "display_name"),
            (["preferences": "dark"], "preferences"),
        ]
        for (body, field) in cases {
            let response = try app.client.send(
                "PATCH", "/v1/me",
                json: body.merging(["display_name": body["display_name"] ?? "Changed?"]) { a, _ in a },
                headers: auth)
            XCTAssertEqual(response.status, 422, "\(body)")
            XCTAssertTrue(try response.errorFields().contains(field), "\(body): \(response.text)")
        }
        XCTAssertEqual(try app.client.get("/v1/me", headers: auth).text, before, "nothing changed")
    }

    func testAvatarUploadServeAndConditionalGet() async throws {
        let app = try await startTestApp()
        let auth = try signUp(app, "face@x.io")
        let uploaded = try app.client.send(
            "PUT", "/v1/me/avatar", headers: auth.merging(["Content-Type": "image/png"]) { $1 }, body: Self.png)
        XCTAssertEqual(uploaded.status, 200, uploaded.text)
        let user = try uploaded.jsonObject()
        let url = try XCTUnwrap(user["avatar_url"] as? String)
        let id = user["id"] as! String
        // Absolute, from the public URL (here the default, the configured address; AvatarURLTests downloads by it).
        let base = app.application.context.configuration.publicURL
        XCTAssertTrue(url.hasPrefix("\(base)/v1/avatars/\(id)?v="), url)
        let image = try app.client.get(String(url.dropFirst(base.count)))
        XCTAssertEqual(image.status, 200)
        XCTAssertEqual(image.body, Self.png)
        XCTAssertEqual(image.header("Content-Type"), "image/png")
        let etag = try XCTUnwrap(image.header("ETag"))
        XCTAssertNotNil(image.header("Cache-Control"))
        XCTAssertEqual(try app.client.get("/v1/avatars/\(id)", headers: ["If-None-Match": etag]).status, 304)
        XCTAssertEqual(try app.client.get("/v1/avatars/\(id)", headers: ["If-None-Match": "\"other\""]).status, 200)

        // Declared as PNG but really a JPEG: stored by what the bytes are.
        let replaced = try app.client.send(
            "PUT", "/v1/me/avatar", headers: auth.merging(["Content-Type": "image/png"]) { $1 }, body: Self.jpeg)
        XCTAssertEqual(replaced.status, 200)
        XCTAssertNotEqual(try replaced.jsonObject()["avatar_url"] as? String, url)
        XCTAssertEqual(try app.client.get("/v1/avatars/\(id)").header("Content-Type"), "image/jpeg")

        let removed = try app.client.send("DELETE", "/v1/me/avatar", headers: auth)
        XCTAssertTrue(try removed.jsonObject()["avatar_url"] is NSNull)
        XCTAssertEqual(try app.client.get("/v1/avatars/\(id)").status, 404)
        XCTAssertEqual(try app.client.get("/v1/avatars/not-a-uuid").status, 404)
    }

    func testFakeImagesWrongTypesAndHugeAvatarsAreRefused() async throws {
        let app = try await startTestApp()
        let auth = try signUp(app, "fake@x.io")
        let fakePNG = try app.client.send(
            "PUT", "/v1/me/avatar", headers: auth.merging(["Content-Type": "image/png"]) { $1 },
            body: Array("<svg>not a png</svg>".utf8))
        XCTAssertEqual(fakePNG.status, 415)
        XCTAssertEqual(try fakePNG.jsonObject()["code"] as? String, "unsupported_media_type")
        XCTAssertEqual(
            try app.client.send(
                "PUT", "/v1/me/avatar", headers: auth.merging(["Content-Type": "image/gif"]) { $1 }, body: Self.png
            ).status, 415)
        let huge = try app.client.send(
            "PUT", "/v1/me/avatar", headers: auth.merging(["Content-Type": "image/png"]) { $1 },
            body: Self.png + Array(repeating: 0, count: 2 * 1024 * 1024))
        XCTAssertEqual(huge.status, 413)
        let exactly = Self.png + Array(repeating: 0, count: 2 * 1024 * 1024 - Self.png.count)
        XCTAssertEqual(
            try app.client.send(
                "PUT", "/v1/me/avatar", headers: auth.merging(["Content-Type": "image/png"]) { $1 }, body: exactly
            ).status, 200)
    }

    func testDeletingTheAccountRemovesEverythingAndKillsItsTokens() async throws {
        let app = try await startTestApp()
        let auth = try signUp(app, "leaving@x.io")
        let quote = try await app.insertQuotes(["Kept quote"])[0].uuidString
        _ = try app.client.send("PUT", "/v1/favorites/\(quote)", headers: auth)
        let collection =
            try app.client.send("POST", "/v1/collections", json: ["name": "Mine"], headers: auth).jsonObject()["id"]
            as! String
        _ = try app.client.send("PUT", "/v1/collections/\(collection)/quotes/\(quote)", headers: auth)
        _ = try app.client.send(
            "PUT", "/v1/me/avatar", headers: auth.merging(["Content-Type": "image/png"]) { $1 }, body: Self.png)

        let wrong = try app.client.send("DELETE", "/v1/me", json: ["password": "not it at all"], headers: auth)
        XCTAssertEqual(wrong.status, 401)
        XCTAssertEqual(try wrong.jsonObject()["code"] as? String, "invalid_credentials")
        XCTAssertEqual(
            try app.client.send("DELETE", "/v1/me", json: ["password": "correct horse"], headers: auth).status, 204)
        XCTAssertEqual(try app.client.get("/v1/me", headers: auth).status, 401)
        XCTAssertEqual(try app.client.get("/v1/favorites", headers: auth).status, 401)
        let left = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM profiles) + (SELECT count(*) FROM sessions)
                     + (SELECT count(*) FROM user_favorites) + (SELECT count(*) FROM collections)
                     + (SELECT count(*) FROM collection_quotes) + (SELECT count(*) FROM avatars) AS rows,
                       (SELECT count(*) FROM quotes) AS quotes
                """)[0]
        }
        XCTAssertEqual(try left.decode("rows", as: Int.self), 0)
        XCTAssertEqual(try left.decode("quotes", as: Int.self), 1, "quotes are not the user's to delete")
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/login", json: ["email": "leaving@x.io", "password": "correct horse"])
                .status, 401)
    }

    func testRealHashingParametersWorkEndToEnd() async throws {
        let app = try await startTestApp { $0.scrypt = .default }
        _ = try signUp(app, "real@x.io")
        let stored = try await app.withConnection {
            try $0.query("SELECT password_hash FROM users")[0].decode("password_hash", as: String.self)
        }
        XCTAssertTrue(stored.hasPrefix("$scrypt$ln=14,r=12,p=1$"), stored)
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/login", json: ["email": "real@x.io", "password": "correct horse"])
                .status, 200)
    }

    func testWeakStoredHashesAreUpgradedAtLogin() async throws {
        let weak = try await TestApp.start()  // signs up with the suite's cheap parameters
        _ = try signUp(weak, "upgrade@x.io")
        let url = weak.databaseURL
        await weak.stop()
        let strong = try await startTestApp(databaseURL: url) { $0.scrypt = .default }
        XCTAssertEqual(
            try strong.client.send(
                "POST", "/v1/auth/login", json: ["email": "upgrade@x.io", "password": "correct horse"]
            ).status, 200)
        let stored = try await strong.withConnection {
            try $0.query("SELECT password_hash FROM users")[0].decode("password_hash", as: String.self)
        }
        XCTAssertTrue(stored.hasPrefix("$scrypt$ln=14,r=12,p=1$"), stored)
    }
}
