import Foundation
import TestSupport
import XCTest

/// `/auth/v1`: GoTrue's Session and User shapes, its error format, and the same sessions as `/v1`.
final class SupabaseAuthTests: XCTestCase {
    private let password = "correct horse battery"

    private func signUp(_ app: TestApp, _ email: String, data: [String: Any] = [:]) throws -> HTTPTestResponse {
        try app.supabase(
            "POST", "/auth/v1/signup", body: ["email": email, "password": password, "data": data],
            headers: ["X-Supabase-Api-Version": "2024-01-01"])
    }

    func testSignUpAnswersASessionThatWorksOnBothAPIs() async throws {
        let app = try await startTestApp()
        let response = try signUp(app, "Alice@Example.com", data: ["display_name": "Alice", "theme": "dark"])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("X-Supabase-Api-Version"), "2024-01-01")
        let session = try response.jsonObject()
        for key in ["access_token", "token_type", "expires_in", "expires_at", "refresh_token", "user"] {
            XCTAssertNotNil(session[key], key)
        }
        let user = try XCTUnwrap(session["user"] as? [String: Any])
        for key in [
            "id", "aud", "role", "email", "app_metadata", "user_metadata", "identities", "created_at", "updated_at",
            "is_anonymous",
        ] {
            XCTAssertNotNil(user[key], key)
        }
        XCTAssertEqual(user["email"] as? String, "alice@example.com")
        XCTAssertEqual((user["user_metadata"] as? [String: Any])?["theme"] as? String, "dark")
        let token = try XCTUnwrap(session["access_token"] as? String)
        // GoTrue's claims, and the same session as /v1.
        let payload = try XCTUnwrap(token.split(separator: ".").dropFirst().first)
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let claims = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: try XCTUnwrap(Data(base64Encoded: base64))) as? [String: Any])
        XCTAssertEqual(claims["role"] as? String, "authenticated")
        XCTAssertEqual(claims["aud"] as? String, "authenticated")
        XCTAssertEqual(claims["aal"] as? String, "aal1")
        XCTAssertNotNil(claims["session_id"] as? String)
        XCTAssertEqual((claims["user_metadata"] as? [String: Any])?["display_name"] as? String, "Alice")
        let me = try app.client.get("/v1/me", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(me.status, 200)
        XCTAssertEqual(
            try me.jsonObject()["display_name"] as? String, "Alice", "display_name in user_metadata is the profile's")
    }

    func testErrorsInGoTrueFormat() async throws {
        let app = try await startTestApp()
        XCTAssertEqual(try signUp(app, "bob@example.com").status, 200)
        let duplicate = try signUp(app, "BOB@example.com")
        XCTAssertEqual(duplicate.status, 422)
        XCTAssertEqual(try duplicate.jsonObject()["code"] as? String, "user_already_exists")
        XCTAssertEqual(try duplicate.jsonObject()["error_code"] as? String, "user_already_exists")
        XCTAssertNotNil(try duplicate.jsonObject()["msg"] as? String)
        XCTAssertEqual(duplicate.header("X-Supabase-Api-Version"), "2024-01-01")
        let weak = try app.supabase("POST", "/auth/v1/signup", body: ["email": "weak@example.com", "password": "abc"])
        XCTAssertEqual(weak.status, 422)
        XCTAssertEqual(try weak.jsonObject()["code"] as? String, "weak_password")
        XCTAssertNotNil((try weak.jsonObject()["weak_password"] as? [String: Any])?["reasons"])
        let wrong = try app.supabase(
            "POST", "/auth/v1/token?grant_type=password",
            body: ["email": "bob@example.com", "password": "nope nope nope"])
        XCTAssertEqual(wrong.status, 400)
        XCTAssertEqual(try wrong.jsonObject()["code"] as? String, "invalid_credentials")
        let badRefresh = try app.supabase(
            "POST", "/auth/v1/token?grant_type=refresh_token", body: ["refresh_token": "nope"])
        XCTAssertEqual(badRefresh.status, 400)
        XCTAssertEqual(try badRefresh.jsonObject()["code"] as? String, "refresh_token_not_found")
        let anonymous = try app.supabase("GET", "/auth/v1/user")
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(try anonymous.jsonObject()["code"] as? String, "no_authorization")
        let forged = try app.client.get(
            "/auth/v1/user", headers: ["apikey": app.anonKey, "Authorization": "Bearer x.y.z"])
        XCTAssertEqual(forged.status, 403)
        XCTAssertEqual(try forged.jsonObject()["code"] as? String, "bad_jwt")
        let noKey = try app.client.send(
            "POST", "/auth/v1/signup", json: ["email": "c@example.com", "password": password])
        XCTAssertEqual(noKey.status, 401)
    }

    func testUserMetadataRefreshAndLogoutScopes() async throws {
        let app = try await startTestApp()
        let first = try signUp(app, "carol@example.com").jsonObject()
        let second = try app.supabase(
            "POST", "/auth/v1/token?grant_type=password",
            body: ["email": "carol@example.com", "password": password]
        ).jsonObject()
        let third = try app.supabase(
            "POST", "/auth/v1/token?grant_type=password",
            body: ["email": "carol@example.com", "password": password]
        ).jsonObject()
        let tokens = [first, second, third].compactMap { $0["access_token"] as? String }
        XCTAssertEqual(tokens.count, 3)
        func headers(_ token: String) -> [String: String] {
            ["apikey": app.anonKey, "Authorization": "Bearer \(token)"]
        }

        let updated = try app.client.send(
            "PUT", "/auth/v1/user", json: ["data": ["avatar_url": "avatars/x.png"]], headers: headers(tokens[0]))
        XCTAssertEqual(updated.status, 200)
        XCTAssertEqual(
            (try updated.jsonObject()["user_metadata"] as? [String: Any])?["avatar_url"] as? String, "avatars/x.png")
        let emailChange = try app.client.send(
            "PUT", "/auth/v1/user", json: ["email": "x@example.com"], headers: headers(tokens[0]))
        XCTAssertEqual(emailChange.status, 422)

        let refreshed = try app.supabase(
            "POST", "/auth/v1/token?grant_type=refresh_token",
            body: ["refresh_token": try XCTUnwrap(second["refresh_token"] as? String)])
        XCTAssertEqual(refreshed.status, 200)
        // Past the reuse window for parallel refreshes (REFRESH_TOKEN_REUSE_INTERVAL).
        try await app.withConnection {
            try $0.query(
                "UPDATE refresh_tokens SET rotated_at = rotated_at - interval '1 minute' WHERE rotated_at IS NOT NULL")
        }
        let reused = try app.supabase(
            "POST", "/auth/v1/token?grant_type=refresh_token", body: ["refresh_token": second["refresh_token"]!])
        XCTAssertEqual(try reused.jsonObject()["code"] as? String, "refresh_token_already_used")

        // local: only this session; others: every other one (the third), the first survives both.
        XCTAssertEqual(
            try app.client.send("POST", "/auth/v1/logout?scope=others", headers: headers(tokens[0])).status, 204)
        XCTAssertEqual(try app.client.get("/auth/v1/user", headers: headers(tokens[2])).status, 403)
        XCTAssertEqual(try app.client.get("/auth/v1/user", headers: headers(tokens[0])).status, 200)
        XCTAssertEqual(
            try app.client.send("POST", "/auth/v1/logout?scope=local", headers: headers(tokens[0])).status, 204)
        XCTAssertEqual(try app.client.get("/v1/me", headers: ["Authorization": "Bearer \(tokens[0])"]).status, 401)

        let fourth =
            try app.supabase(
                "POST", "/auth/v1/token?grant_type=password",
                body: ["email": "carol@example.com", "password": password]
            ).jsonObject()["access_token"] as? String
        let fifth =
            try app.supabase(
                "POST", "/auth/v1/token?grant_type=password",
                body: ["email": "carol@example.com", "password": password]
            ).jsonObject()["access_token"] as? String
        XCTAssertEqual(
            try app.client.send("POST", "/auth/v1/logout?scope=global", headers: headers(try XCTUnwrap(fourth))).status,
            204)
        XCTAssertEqual(try app.client.get("/auth/v1/user", headers: headers(try XCTUnwrap(fifth))).status, 403)
        let sixth =
            try app.supabase(
                "POST", "/auth/v1/token?grant_type=password",
                body: ["email": "carol@example.com", "password": password]
            ).jsonObject()["access_token"] as? String
        let badScope = try app.client.send(
            "POST", "/auth/v1/logout?scope=everyone", headers: headers(try XCTUnwrap(sixth)))
        XCTAssertEqual(badScope.status, 400)
        XCTAssertEqual(try app.client.get("/auth/v1/user", headers: headers(try XCTUnwrap(sixth))).status, 200)
    }

    func testRecoverQueuesTheSameResetMail() async throws {
        let app = try await startTestApp { $0.smtpURL = "smtp://127.0.0.1:1" }
        XCTAssertEqual(try signUp(app, "dave@example.com").status, 200)
        for email in ["dave@example.com", "nobody@example.com"] {
            let response = try app.supabase("POST", "/auth/v1/recover", body: ["email": email])
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.text, "{}")
        }
        let queued = try await app.withConnection {
            try $0.query("SELECT recipient FROM mail_outbox").map { try $0.decode("recipient", as: String.self) }
        }
        XCTAssertEqual(queued, ["dave@example.com"])
    }
}
