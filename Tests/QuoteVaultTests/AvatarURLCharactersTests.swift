import Foundation
import PGClient
import TestSupport
import XCTest

/// Issue 42: `avatar_url` holds no control character and no whitespace, whichever door writes it; the table
/// itself refuses them (migration 0066), which cleared the ones stored before.
final class AvatarURLCharactersTests: XCTestCase {
    private var app: TestApp!

    override func setUp() async throws { app = try await TestApp.start() }
    override func tearDown() async throws { await app.stop() }

    private static let kept = "https://cdn.example/kept.png"
    private static let refused = [
        "https://a.b/x\r\nSet-Cookie: a=b", "https://a.b/x\u{1}", "https://a.b/x\u{2028}y", "https://a.b/x\u{2029}",
        "https://a.b/x y", "https://a.b/x\ty", "https://a.b/x\u{7F}", "https://a.b/x\u{85}", "https://a.b/x\u{9F}",
        "https://a.b/x\u{A0}", "https://a.b/x\u{3000}", "/v1/avatars/x\ny",
    ]

    private func storedURL(_ user: TestUser) async throws -> String? {
        try await app.withConnection {
            try $0.query("SELECT avatar_url FROM profiles WHERE id = \(user.id)")[0].decode(
                "avatar_url", as: String?.self)
        }
    }

    private func userWithAnAvatarURL() async throws -> TestUser {
        let user = try await app.makeUser()
        let written = try app.supabase(
            "PATCH", "/rest/v1/profiles?id=eq.\(user.id)", as: user, body: ["avatar_url": Self.kept])
        XCTAssertEqual(written.status, 204, written.text)
        return user
    }

    func testRestProfileWritesRefuseControlCharactersAndWhitespace() async throws {
        let user = try await userWithAnAvatarURL()
        for url in Self.refused {
            let patch = try app.supabase(
                "PATCH", "/rest/v1/profiles?id=eq.\(user.id)", as: user, body: ["avatar_url": url])
            XCTAssertEqual(patch.status, 400, "\(url.debugDescription): \(patch.text)")
            XCTAssertEqual(try patch.jsonObject()["code"] as? String, "23514")
            XCTAssertTrue((try patch.jsonObject()["message"] as? String ?? "").contains("avatar_url"), patch.text)
            let upsert = try app.supabase(
                "POST", "/rest/v1/profiles", as: user, body: ["id": user.id.uuidString, "avatar_url": url],
                headers: ["Prefer": "resolution=merge-duplicates"])
            XCTAssertEqual(upsert.status, 400, "\(url.debugDescription): \(upsert.text)")
        }
        let stored = try await storedURL(user)
        XCTAssertEqual(stored, Self.kept)
        let me = try app.client.get("/v1/me", headers: user.authorization)
        XCTAssertEqual(try me.jsonObject()["avatar_url"] as? String, Self.kept)
        // Percent-encoded, the same characters are an ordinary URL.
        let encoded = "https://a.b/x%0D%0ASet-Cookie:%20a=b"
        let written = try app.supabase(
            "PATCH", "/rest/v1/profiles?id=eq.\(user.id)", as: user, body: ["avatar_url": encoded])
        XCTAssertEqual(written.status, 204, written.text)
        let encodedStored = try await storedURL(user)
        XCTAssertEqual(encodedStored, encoded)
    }

    /// `/v1/me` and `/auth/v1/user` do not write `avatar_url` (user metadata is not the profile).
    func testTheOtherDoorsLeaveTheAvatarURLAsItWas() async throws {
        let user = try await userWithAnAvatarURL()
        let attack = Self.refused[0]
        let patched = try app.client.send(
            "PATCH", "/v1/me", json: ["avatar_url": attack, "display_name": "Name"], headers: user.authorization)
        XCTAssertLessThan(patched.status, 500, patched.text)
        let metadata = try app.supabase("PUT", "/auth/v1/user", as: user, body: ["data": ["avatar_url": attack]])
        XCTAssertEqual(metadata.status, 200, metadata.text)
        let stored = try await storedURL(user)
        XCTAssertEqual(stored, Self.kept)
        let me = try app.client.get("/v1/me", headers: user.authorization)
        XCTAssertEqual(try me.jsonObject()["avatar_url"] as? String, Self.kept)
        XCTAssertFalse(me.text.contains("\r\n"), "JSON escapes every control character")
    }

    func testTheTableRefusesThemWhoeverWrites() async throws {
        let user = try await app.makeUser()
        for url in ["https://a.b/x\u{2028}", "https://a.b/\r\n", "https://a.b/\u{1}"] {
            do {
                try await app.withConnection { connection in
                    try connection.query("UPDATE profiles SET avatar_url = \(url) WHERE id = \(user.id)")
                }
                XCTFail("stored \(url.debugDescription)")
            } catch {
                XCTAssertEqual((error as? PGError)?.sqlState, .checkViolation, "\(error)")
            }
        }
    }

    /// Migration 0066 clears the URLs stored before it with one of these characters, and keeps the others.
    func testTheMigrationClearsStoredURLsItWouldRefuse() async throws {
        let bad = try await app.makeUser(), good = try await app.makeUser()
        let migration = try String(
            contentsOf: TestApp.repositoryRoot.appendingPathComponent("migrations/0066_avatar_url_printable.sql"),
            encoding: .utf8)
        try await app.withConnection { connection in
            try connection.execute(unsafeSQL: "ALTER TABLE profiles DROP CONSTRAINT profiles_avatar_url_printable")
            try connection.query("UPDATE profiles SET avatar_url = \(Self.refused[0]) WHERE id = \(bad.id)")
            try connection.query("UPDATE profiles SET avatar_url = \(Self.kept) WHERE id = \(good.id)")
            try connection.execute(unsafeSQL: migration)
        }
        let cleared = try await storedURL(bad), kept = try await storedURL(good)
        XCTAssertNil(cleared)
        XCTAssertEqual(kept, Self.kept)
    }
}
