import Foundation
import TestSupport
import XCTest

/// Small hardening (issue 30, item 6): answers carrying tokens or the user are never cached, an `avatar_url` is
/// `http`/`https`, stored user objects are sandboxed, and a weak `JWT_SECRET` is refused at start.
final class HardeningTests: XCTestCase {
    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 5, count: 64)
    private static let policy = "default-src 'none'; sandbox"

    func testAuthAnswersCarryingTokensOrTheUserAreNotStored() async throws {
        let app = try await startTestApp()
        let email = "no-store-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let credentials = ["email": email, "password": "correct horse"]
        let signUp = try app.supabase("POST", "/auth/v1/signup", body: credentials)
        let login = try app.supabase("POST", "/auth/v1/token?grant_type=password", body: credentials)
        let refreshToken = try XCTUnwrap(try login.jsonObject()["refresh_token"] as? String)
        let refresh = try app.supabase(
            "POST", "/auth/v1/token?grant_type=refresh_token",
            body: ["refresh_token": refreshToken])
        let accessToken = try XCTUnwrap(try refresh.jsonObject()["access_token"] as? String)
        let bearer = ["apikey": app.anonKey, "Authorization": "Bearer \(accessToken)"]
        let user = try app.client.get("/auth/v1/user", headers: bearer)
        let changed = try app.client.send(
            "PUT", "/auth/v1/user", json: ["data": ["display_name": "Ann"]],
            headers: bearer)
        for (name, response) in [
            ("sign-up", signUp), ("password grant", login), ("refresh grant", refresh),
            ("GET user", user), ("PUT user", changed),
        ] {
            XCTAssertEqual(response.status, 200, "\(name): \(response.text)")
            XCTAssertEqual(response.header("Cache-Control"), "no-store", name)
        }
    }

    func testAvatarURLIsHTTPOrHTTPSOnPatchAndUpsert() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let row = "/rest/v1/profiles?id=eq.\(user.id.uuidString)"
        func stored() async throws -> String? {
            try await app.withConnection {
                try $0.query("SELECT avatar_url FROM profiles WHERE id = \(user.id)")[0]
                    .decode("avatar_url", as: String?.self)
            }
        }
        for allowed in ["https://cdn.example/a.png", "http://cdn.example/a.png", "HTTPS://cdn.example/b.png"] {
            let patch = try app.supabase("PATCH", row, as: user, body: ["avatar_url": allowed])
            XCTAssertEqual(patch.status, 204, "\(allowed): \(patch.text)")
            let kept = try await stored()
            XCTAssertEqual(kept, allowed)
        }
        let refusedURLs = [
            "javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "data:text/html,<b>",
            "ftp://cdn.example/a.png", "https:///no-host", "cdn.example/a.png",
        ]
        for refused in refusedURLs {
            let patch = try app.supabase("PATCH", row, as: user, body: ["avatar_url": refused])
            XCTAssertEqual(patch.status, 400, "\(refused): \(patch.text)")
            XCTAssertTrue(patch.text.contains("avatar_url"), patch.text)
            let upsert = try app.supabase(
                "POST", "/rest/v1/profiles", as: user,
                body: ["id": user.id.uuidString, "avatar_url": refused],
                headers: ["Prefer": "resolution=merge-duplicates"])
            XCTAssertEqual(upsert.status, 400, "upsert \(refused): \(upsert.text)")
            let kept = try await stored()
            XCTAssertEqual(kept, "HTTPS://cdn.example/b.png", "nothing written for \(refused)")
        }
    }

    func testStoredAvatarsAreServedSandboxedOnBothDoors() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let id = user.id.uuidString.lowercased()
        let upload = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(id)/me.png",
            headers: app.supabaseHeaders(user, ["Content-Type": "image/png"]),
            body: Self.png)
        XCTAssertEqual(upload.status, 200, upload.text)
        let answers = [
            ("/v1/avatars", try app.client.get("/v1/avatars/\(id)")),
            ("public object", try app.client.get("/storage/v1/object/public/avatars/\(id)/me.png")),
            (
                "object",
                try app.client.get(
                    "/storage/v1/object/avatars/\(id)/me.png",
                    headers: app.supabaseHeaders(user))
            ),
        ]
        for (name, response) in answers {
            XCTAssertEqual(response.status, 200, name)
            XCTAssertEqual(response.body, Self.png, name)
            XCTAssertEqual(response.header("Content-Security-Policy"), Self.policy, name)
            XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff", name)
        }
    }

    func testAWeakJWTSecretIsRefusedAtStartWithHowToMakeOne() async throws {
        let tenDistinct = String(repeating: "0123456789", count: 3) + "01"  // 32 characters, 10 distinct
        let nineDistinct = String(repeating: "012345678", count: 4).prefix(32)  // 32 characters, 9 distinct
        let short = String(tenDistinct.dropLast())  // 31 characters
        for (secret, reason) in [(short, "at least 32"), (String(nineDistinct), "at least 10")] {
            let server = try ServerProcess(
                ["serve"],
                environment: [
                    "DATABASE_URL": "postgresql://127.0.0.1:1/none", "JWT_SECRET": secret, "PORT": "0",
                ])
            let status = try await server.waitForExit()
            XCTAssertNotEqual(status, 0, secret)
            XCTAssertTrue(server.output.contains(reason), server.output)
            XCTAssertTrue(server.output.contains("openssl rand -hex 32"), server.output)
            XCTAssertFalse(server.output.contains(secret), "the secret itself is never printed")
        }
        let accepted = try ServerProcess(
            ["anon-key"],
            environment: [
                "DATABASE_URL": "postgresql://unused", "JWT_SECRET": tenDistinct,
            ])
        let status = try await accepted.waitForExit()
        XCTAssertEqual(status, 0, accepted.output)
    }
}
