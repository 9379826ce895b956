import Foundation
import TestSupport
import XCTest

/// The console's accounts: finding, revoking every session, deleting; never a hash or a token on a page.
final class ConsoleAccountsTests: XCTestCase {
    private func signUp(_ app: TestApp, _ email: String) throws -> (access: String, refresh: String) {
        let session = try app.client.send(
            "POST", "/v1/auth/signup",
            json: ["email": email, "password": "correct horse"])
        XCTAssertEqual(session.status, 201, session.text)
        let object = try session.jsonObject()
        return (try XCTUnwrap(object["access_token"] as? String), try XCTUnwrap(object["refresh_token"] as? String))
    }

    private func auditCount(_ app: TestApp, _ action: String) async throws -> Int {
        try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_audit WHERE action = \(action)")[0]
                .decode("n", as: Int.self)
        }
    }

    func testRevokingSessionsRefusesTheirAccessAndRefreshTokens() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let tokens = try signUp(app, "revoke.me@example.com")
        _ = try signUp(app, "someone.else@example.com")
        let bearer = ["Authorization": "Bearer \(tokens.access)"]
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer).status, 200)
        let cookie = try await app.consoleOwner()

        let found = try app.consoleGet("/console/accounts?q=REVOKE", cookie: cookie)
        XCTAssertEqual(found.status, 200)
        XCTAssertTrue(found.text.contains("revoke.me@example.com"))
        XCTAssertFalse(found.text.contains("someone.else@example.com"), "only matching emails")
        let hash = try await app.withConnection { connection in
            try connection.query("SELECT id, password_hash FROM users WHERE email = 'revoke.me@example.com'")[0]
        }
        let id = try hash.decode("id", as: UUID.self).uuidString.lowercased()
        let page = try app.consoleGet("/console/accounts/\(id)", cookie: cookie)
        XCTAssertEqual(page.status, 200)
        for secret in [try hash.decode("password_hash", as: String.self), tokens.access, tokens.refresh, "$scrypt"] {
            XCTAssertFalse(page.text.contains(secret) || found.text.contains(secret), "no hash or token shown")
        }
        XCTAssertTrue(page.text.contains("<dt>Active sessions</dt><dd>1</dd>"), page.text)

        let revoked = try app.consoleSubmit(
            "/console/accounts/\(id)/revoke", cookie: cookie, fields: [:],
            from: "/console/accounts/\(id)")
        XCTAssertEqual(revoked.status, 303, revoked.text)
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer).status, 401, "the access token is refused")
        let refresh = try app.client.send("POST", "/v1/auth/refresh", json: ["refresh_token": tokens.refresh])
        XCTAssertEqual(refresh.status, 401, "the refresh token is refused")
        let audited1 = try await auditCount(app, "account.revoke_sessions")
        XCTAssertEqual(audited1, 1)
        XCTAssertTrue(
            try app.consoleGet("/console/accounts/\(id)", cookie: cookie).text
                .contains("<dt>Active sessions</dt><dd>0</dd>"))
        let withoutToken = try app.consolePost("/console/accounts/\(id)/revoke", cookie: cookie, fields: [:])
        XCTAssertEqual(withoutToken.status, 403)
    }

    func testDeletingAnAccountAsksFirstThenRemovesEverything() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let tokens = try signUp(app, "leaving@example.com")
        let bearer = ["Authorization": "Bearer \(tokens.access)"]
        XCTAssertEqual(
            try app.client.send("POST", "/v1/collections", json: ["name": "Mine"], headers: bearer).status,
            201)
        let cookie = try await app.consoleOwner()
        let id = try await app.withConnection { connection in
            try connection.query("SELECT id FROM users WHERE email = 'leaving@example.com'")[0]
                .decode("id", as: UUID.self)
        }.uuidString.lowercased()
        XCTAssertTrue(
            try app.consoleGet("/console/accounts/\(id)", cookie: cookie).text
                .contains("<dt>Collections</dt><dd>1</dd>"))
        let confirm = try app.consoleGet("/console/accounts/\(id)/delete", cookie: cookie)
        XCTAssertEqual(confirm.status, 200)
        XCTAssertTrue(confirm.text.contains("action=\"/console/accounts/\(id)/delete\""), "a confirmation form")
        XCTAssertEqual(try app.consolePost("/console/accounts/\(id)/delete", cookie: cookie, fields: [:]).status, 403)
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer).status, 200, "a refused post deletes nothing")

        let deleted = try app.consoleSubmit(
            "/console/accounts/\(id)/delete", cookie: cookie, fields: [:],
            from: "/console/accounts/\(id)/delete")
        XCTAssertEqual(deleted.status, 303, deleted.text)
        XCTAssertEqual(try app.client.get("/v1/me", headers: bearer).status, 401)
        let left = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT (SELECT count(*) FROM users WHERE email = 'leaving@example.com')
                     + (SELECT count(*) FROM collections) AS n
                """)[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(left, 0)
        let audited2 = try await auditCount(app, "account.delete")
        XCTAssertEqual(audited2, 1)
        XCTAssertEqual(try app.consoleGet("/console/accounts/\(id)", cookie: cookie).status, 404)
    }

    func testTheRevokedNoticeShowsOnlyANumber() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        _ = try signUp(app, "notice@example.com")
        let cookie = try await app.consoleOwner()
        let id = try await app.withConnection { connection in
            try connection.query("SELECT id FROM users WHERE email = 'notice@example.com'")[0].decode(
                "id", as: UUID.self)
        }
        let path = "/console/accounts/\(id.uuidString.lowercased())"
        let phishing = try app.consoleGet(path + "?revoked=0%20sessions.%20Call%20support%20at%20555", cookie: cookie)
        XCTAssertEqual(phishing.status, 200)
        XCTAssertFalse(phishing.text.contains("Call support"), phishing.text)
        XCTAssertFalse(phishing.text.contains("Revoked"))
        XCTAssertTrue(try app.consoleGet(path + "?revoked=2", cookie: cookie).text.contains("Revoked 2 session(s)"))
    }
}
