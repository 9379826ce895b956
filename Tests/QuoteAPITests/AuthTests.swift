import AuthJWT
import Foundation
import TestSupport
import XCTest

/// `/v1/auth/…`: sign-up, login, refresh rotation and reuse, logout, password reset by mail.
final class AuthTests: XCTestCase {
    private func signUp(_ app: TestApp, _ email: String, _ password: String = "correct horse") throws -> [String: Any] {
        let response = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": email, "password": password, "display_name": "Ada"])
        XCTAssertEqual(response.status, 201, response.text)
        return try response.jsonObject()
    }

    private func bearer(_ session: [String: Any]) -> [String: String] {
        ["Authorization": "Bearer \(session["access_token"] as! String)"]
    }

    func testSignUpAnswersASessionAndStoresALowerCasedEmail() async throws {
        let app = try await startTestApp()
        let session = try signUp(app, "  Ada@Example.COM ")
        XCTAssertEqual(session["token_type"] as? String, "bearer")
        XCTAssertEqual(session["expires_in"] as? Int, 900)
        let expiresAt = try XCTUnwrap(session["expires_at"] as? Int)
        XCTAssertEqual(Double(expiresAt), Date().timeIntervalSince1970 + 900, accuracy: 10)
        XCTAssertEqual((session["refresh_token"] as? String)?.count, 43)
        let user = try XCTUnwrap(session["user"] as? [String: Any])
        XCTAssertEqual(user["email"] as? String, "ada@example.com")
        XCTAssertEqual(user["display_name"] as? String, "Ada")
        XCTAssertTrue(user["avatar_url"] is NSNull)
        let preferences = try XCTUnwrap(user["preferences"] as? [String: Any])
        XCTAssertEqual(preferences["accent_color"] as? String, "blue")
        XCTAssertEqual(preferences["font_size"] as? String, "medium")
        XCTAssertEqual(preferences["notification_enabled"] as? Bool, false)
        XCTAssertTrue(preferences["color_scheme"] is NSNull)
        // The access token carries the contract's claims.
        let claims = try JWTSigner(secret: app.application.context.configuration.jwtSecret)
            .verify(session["access_token"] as! String, now: Date())
        XCTAssertEqual(claims.sub, user["id"] as? String)
        XCTAssertEqual(claims.email, "ada@example.com")
        XCTAssertEqual(claims.role, "authenticated")
        XCTAssertTrue(claims.aud.contains("authenticated"))
        XCTAssertEqual(claims.exp - claims.iat, 900)
        let stored = try await app.withConnection {
            try $0.query("SELECT password_hash FROM users")[0].decode("password_hash", as: String.self)
        }
        XCTAssertTrue(stored.hasPrefix("$scrypt$"), "only a PHC hash is stored")
        XCTAssertFalse(stored.contains("correct horse"))
    }

    func testSignUpValidation() async throws {
        let app = try await startTestApp()
        let cases: [([String: Any], String)] = [
            (["email": "not-an-email", "password": "long enough"], "email"),
            (["email": "a@b.co", "password": "short"], "password"),
            // Seven code points (the OpenAPI document's minLength counts code points).
            (["email": "a@b.co", "password": "e\u{301}e\u{301}e\u{301}e"], "password"),
            (["email": "a@b.co", "password": String(repeating: "é", count: 513)], "password"),
            (["email": "a@b.co"], "password"),
            (["email": "a@b.co", "password": 12_345_678], "password"),
            (
                ["email": "a@b.co", "password": "long enough", "display_name": String(repeating: "n", count: 101)],
                "display_name"
            ),
        ]
        for (body, field) in cases {
            let response = try app.client.send("POST", "/v1/auth/signup", json: body)
            XCTAssertEqual(response.status, 422, "\(body)")
            XCTAssertTrue(try response.errorFields().contains(field), "\(body): \(response.text)")
        }
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/signup", json: ["email": "a@b.co", "password": String(repeating: "a", count: 1024)]
            ).status, 201)
        // Eight code points that read as four letters: as long as the document asks.
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/signup",
                json: ["email": "c@d.co", "password": String(repeating: "e\u{301}", count: 4)]
            ).status, 201)
        let users = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM users")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(users, 2, "refused sign-ups created nothing")
    }

    func testTwentyConcurrentSignUpsOfOneEmailGiveExactlyOne201() async throws {
        let app = try await startTestApp()
        let port = app.application.port
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try HTTPTestClient(port: port).send(
                        "POST", "/v1/auth/signup",
                        json: ["email": index % 2 == 0 ? "race@x.io" : "RACE@x.io", "password": "password \(index)"]
                    ).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses.filter { $0 == 201 }.count, 1)
        XCTAssertEqual(statuses.filter { $0 == 409 }.count, 19)
        let conflict = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": "race@x.io", "password": "another one"])
        XCTAssertEqual(try conflict.jsonObject()["code"] as? String, "email_exists")
    }

    func testLoginAnswersTheSame401ForUnknownEmailAndWrongPassword() async throws {
        let app = try await startTestApp()
        _ = try signUp(app, "known@x.io")
        let ok = try app.client.send(
            "POST", "/v1/auth/login", json: ["email": "KNOWN@x.io ", "password": "correct horse"])
        XCTAssertEqual(ok.status, 200)
        XCTAssertNotNil(try ok.jsonObject()["access_token"] as? String)
        let wrong = try app.client.send(
            "POST", "/v1/auth/login", json: ["email": "known@x.io", "password": "wrong horse"])
        let unknown = try app.client.send(
            "POST", "/v1/auth/login", json: ["email": "nobody@x.io", "password": "wrong horse"])
        XCTAssertEqual(wrong.status, 401)
        XCTAssertEqual(unknown.status, 401)
        XCTAssertEqual(try wrong.jsonObject()["code"] as? String, "invalid_credentials")
        XCTAssertEqual(wrong.text, unknown.text, "the same body, so an attacker learns nothing")
    }

    func testRefreshRotatesAndReuseRevokesTheSession() async throws {
        let app = try await startTestApp()
        let session = try signUp(app, "rotate@x.io")
        let first = session["refresh_token"] as! String
        let refreshed = try app.client.send("POST", "/v1/auth/refresh", json: ["refresh_token": first])
        XCTAssertEqual(refreshed.status, 200)
        let second = try refreshed.jsonObject()
        XCTAssertNotEqual(second["refresh_token"] as? String, first)
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer(second)).status, 200)

        // The old token again, later than the reuse window for parallel refreshes: theft. The whole session dies,
        // the newest tokens too.
        try await app.withConnection {
            try $0.query(
                "UPDATE refresh_tokens SET rotated_at = rotated_at - interval '11 seconds' WHERE rotated_at IS NOT NULL"
            )
        }
        let reuse = try app.client.send("POST", "/v1/auth/refresh", json: ["refresh_token": first])
        XCTAssertEqual(reuse.status, 401)
        XCTAssertEqual(try reuse.jsonObject()["code"] as? String, "refresh_token_reused")
        let afterTheft = try app.client.send(
            "POST", "/v1/auth/refresh", json: ["refresh_token": second["refresh_token"] as! String])
        XCTAssertEqual(afterTheft.status, 401)
        XCTAssertEqual(try afterTheft.jsonObject()["code"] as? String, "refresh_token_invalid")
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer(second)).status, 401)

        for bad in ["", "garbage", String(repeating: "A", count: 43)] {
            let response = try app.client.send("POST", "/v1/auth/refresh", json: ["refresh_token": bad])
            XCTAssertEqual(response.status, 401)
            XCTAssertEqual(try response.jsonObject()["code"] as? String, "refresh_token_invalid")
        }
    }

    func testLogoutKillsTheAccessAndRefreshTokensAtOnce() async throws {
        let app = try await startTestApp()
        let session = try signUp(app, "bye@x.io")
        let other = try app.client.send(
            "POST", "/v1/auth/login", json: ["email": "bye@x.io", "password": "correct horse"]
        ).jsonObject()
        XCTAssertEqual(try app.client.send("POST", "/v1/auth/logout", headers: bearer(session)).status, 204)
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer(session)).status, 401)
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/refresh", json: ["refresh_token": session["refresh_token"] as! String]
            ).status, 401)
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer(other)).status, 200, "only that session ends")
        XCTAssertEqual(try app.client.send("POST", "/v1/auth/logout").status, 401)
    }

    func testForgedExpiredAndAlgNoneTokensAreRefused() async throws {
        let app = try await startTestApp()
        let session = try signUp(app, "forge@x.io")
        let user = session["user"] as! [String: Any]
        let now = Int(Date().timeIntervalSince1970)
        let sid = try await app.withConnection {
            try $0.query("SELECT id::text FROM sessions")[0].decode(at: 0, as: String.self)
        }
        func claims(exp: Int) -> AccessTokenClaims {
            AccessTokenClaims(
                sub: user["id"] as! String, sid: sid, email: "forge@x.io", iat: now - 10, exp: exp,
                role: "authenticated")
        }
        let expired = try JWTSigner(secret: app.application.context.configuration.jwtSecret).sign(claims(exp: now - 1))
        let otherKey = try JWTSigner(secret: Array("another-secret-of-at-least-32-bytes-long".utf8)).sign(
            claims(exp: now + 600))
        let payload = Base64URL.encode(try JSONEncoder().encode(claims(exp: now + 600)))
        let none = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + payload + "."
        let valid = session["access_token"] as! String
        let tampered = String(valid.dropLast()) + (valid.last == "A" ? "B" : "A")
        for token in [expired, otherKey, none, tampered, "not.a.jwt", String(repeating: "x", count: 10_000)] {
            let response = try app.client.get("/v1/me", headers: ["Authorization": "Bearer \(token)"])
            XCTAssertEqual(response.status, 401)
            XCTAssertEqual(try response.jsonObject()["code"] as? String, "unauthorized")
        }
        XCTAssertEqual(try app.client.get("/v1/me", headers: ["Authorization": "Basic abc"]).status, 401)
    }

    func testPasswordResetByMailIsSingleUseAndRevokesOtherSessions() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let app = try await startTestApp {
            $0.smtpURL = sink.url; $0.passwordResetURL = "https://app.example/reset"
        }
        let session = try signUp(app, "forgetful@x.io")
        let accepted = try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "Forgetful@x.io"])
        XCTAssertEqual(accepted.status, 202)
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "stranger@x.io"]).status, 202,
            "the same answer whether or not the account exists")
        let mails = try await sink.waitForMessages(1)
        XCTAssertEqual(mails.count, 1, "only the existing account gets mail")
        let token = try XCTUnwrap(SMTPSink.token(in: mails[0]))
        XCTAssertTrue(mails[0].contains("To: <forgetful@x.io>"))

        let confirmed = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm", json: ["token": token, "password": "brand new pass"])
        XCTAssertEqual(confirmed.status, 200)
        XCTAssertNotNil(try confirmed.jsonObject()["access_token"] as? String)
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer(session)).status, 401, "other sessions are revoked")
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer(try confirmed.jsonObject())).status, 200)
        let reused = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm", json: ["token": token, "password": "another pass"])
        XCTAssertEqual(reused.status, 400)
        XCTAssertEqual(try reused.jsonObject()["code"] as? String, "reset_token_invalid")
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/login", json: ["email": "forgetful@x.io", "password": "brand new pass"]
            ).status, 200)
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/login", json: ["email": "forgetful@x.io", "password": "correct horse"]
            ).status, 401)
    }

    func testResetTokensExpireAfterAnHour() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let app = try await startTestApp { $0.smtpURL = sink.url }
        _ = try signUp(app, "late@x.io")
        _ = try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "late@x.io"])
        let mail = try await sink.waitForMessages(1)[0]
        let token = try XCTUnwrap(SMTPSink.token(in: mail))
        try await app.withConnection {
            try $0.query("UPDATE password_reset_tokens SET expires_at = now() - interval '1 second'")
        }
        let response = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm", json: ["token": token, "password": "too late now"])
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(try response.jsonObject()["code"] as? String, "reset_token_invalid")
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/password-reset/confirm", json: ["token": token, "password": "short"])
                .status, 422)
    }

    func testMailIsDeliveredOnceTheSMTPServerComesBack() async throws {
        let sink = try SMTPSink()
        let port = sink.port
        sink.stop()
        let app = try await startTestApp { $0.smtpURL = "smtp://127.0.0.1:\(port)" }
        _ = try signUp(app, "patient@x.io")
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "patient@x.io"]).status, 202)
        // The first attempt fails while nothing listens; the mail stays in the outbox with a retry time.
        var attempts = 0
        for _ in 0..<100 where attempts == 0 {
            attempts = try await app.withConnection {
                try $0.query("SELECT attempts::int8 FROM mail_outbox")[0].decode(at: 0, as: Int.self)
            }
            if attempts == 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        XCTAssertGreaterThan(attempts, 0)
        let back = try SMTPSink(port: port)
        defer { back.stop() }
        try await app.withConnection { try $0.query("UPDATE mail_outbox SET next_attempt_at = now()") }
        let mails = try await back.waitForMessages(1)
        XCTAssertNotNil(SMTPSink.token(in: mails[0]))
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(back.received.count, 1, "delivered once")
    }

    func testResetRequestsAreThrottledPerEmail() async throws {
        let app = try await startTestApp()
        for _ in 0..<3 {
            XCTAssertEqual(
                try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "spam@x.io"]).status, 202)
        }
        let throttled = try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "spam@x.io"])
        XCTAssertEqual(throttled.status, 429)
        XCTAssertEqual(try throttled.jsonObject()["code"] as? String, "rate_limited")
        XCTAssertGreaterThan(Int(throttled.header("Retry-After") ?? "") ?? 0, 0)
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "other@x.io"]).status, 202)
        XCTAssertEqual(try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "nope"]).status, 422)
    }

    func testFailedLoginsAreThrottledPerEmailAndCanBeSwitchedOff() async throws {
        let app = try await TestApp.start()
        _ = try signUp(app, "target@x.io")
        for _ in 0..<10 {
            XCTAssertEqual(
                try app.client.send(
                    "POST", "/v1/auth/login", json: ["email": "target@x.io", "password": "guess guess"]
                ).status, 401)
        }
        let throttled = try app.client.send(
            "POST", "/v1/auth/login", json: ["email": "target@x.io", "password": "correct horse"])
        XCTAssertEqual(throttled.status, 429)
        XCTAssertNotNil(throttled.header("Retry-After"))
        let url = app.databaseURL
        await app.stop()
        let unlimited = try await startTestApp(databaseURL: url) { $0.rateLimitsEnabled = false }
        XCTAssertEqual(
            try unlimited.client.send(
                "POST", "/v1/auth/login", json: ["email": "target@x.io", "password": "correct horse"]
            ).status, 200)
    }

    func testABurstOfLoginsIsQueuedAndBeyondTheQueueIs503() async throws {
        let app = try await TestApp.start {
            $0.hashingThreads = 1; $0.hashingQueueLimit = 40
        }
        _ = try signUp(app, "burst@x.io")
        let port = app.application.port
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    try HTTPTestClient(port: port).send(
                        "POST", "/v1/auth/login", json: ["email": "burst@x.io", "password": "correct horse"]
                    ).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses, Array(repeating: 200, count: 32), "a burst of 32 is served")
        await app.stop()

        // A queue with no room at all makes "past the limit" deterministic, whatever the machine's speed.
        let full = try await startTestApp {
            $0.hashingThreads = 1; $0.hashingQueueLimit = 0
        }
        let busy = try full.client.send(
            "POST", "/v1/auth/signup", json: ["email": "late@x.io", "password": "password!"])
        XCTAssertEqual(busy.status, 503, "past the queue limit the server says so")
        XCTAssertEqual(try busy.jsonObject()["code"] as? String, "service_unavailable")
        XCTAssertNotNil(busy.header("Retry-After"))
        let users = try await full.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM users")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(users, 0, "a refused sign-up changes nothing")
    }
}
