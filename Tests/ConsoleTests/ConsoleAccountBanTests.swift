import Foundation
import TestSupport
import XCTest

/// Disabling (banning) an account from the console and enabling it again: every door refuses a banned user's
/// tokens, sign-in is refused in each door's words, and re-enabling restores sign-in; both audited.
final class ConsoleAccountBanTests: XCTestCase {
    private let password = "correct horse"

    private func logIn(_ app: TestApp, _ email: String) throws -> HTTPTestResponse {
        try app.client.send("POST", "/v1/auth/login", json: ["email": email, "password": password])
    }

    private func goTrueLogIn(_ app: TestApp, _ email: String) throws -> HTTPTestResponse {
        try app.supabase(
            "POST", "/auth/v1/token?grant_type=password", body: ["email": email, "password": password])
    }

    /// Whether each door refuses `token` as a credential: `/v1`, `/auth/v1`, `/rest/v1`, `/storage/v1` (whose
    /// refusal is `400` with "Invalid JWT", as Supabase Storage answers).
    private func refused(_ app: TestApp, _ token: String, id: String) throws -> [Bool] {
        let bearer = ["apikey": app.anonKey, "Authorization": "Bearer \(token)"]
        let storage = try app.client.get("/storage/v1/object/avatars/\(id)/a.png", headers: bearer)
        return [
            try app.client.get("/v1/me", headers: bearer).status == 401,
            try app.client.get("/auth/v1/user", headers: bearer).status == 403,
            try app.client.get("/rest/v1/collections?select=id", headers: bearer).status == 401,
            storage.status == 400 && storage.text.contains("Invalid JWT"),
        ]
    }

    private func audited(_ app: TestApp, _ action: String) async throws -> Int {
        try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_audit WHERE action = \(action)")[0]
                .decode("n", as: Int.self)
        }
    }

    func testABannedUserIsRefusedOnEveryDoorUntilReEnabled() async throws {
        let app = try await startTestApp()
        let email = "banned@example.com"
        let signUp = try app.client.send("POST", "/v1/auth/signup", json: ["email": email, "password": password])
        XCTAssertEqual(signUp.status, 201, signUp.text)
        let v1 = try signUp.jsonObject()
        let access = try XCTUnwrap(v1["access_token"] as? String),
            refresh = try XCTUnwrap(v1["refresh_token"] as? String)
        let goTrue = try XCTUnwrap(try goTrueLogIn(app, email).jsonObject()["access_token"] as? String)
        let id = try XCTUnwrap((v1["user"] as? [String: Any])?["id"] as? String)
        for token in [access, goTrue] {
            XCTAssertEqual(try refused(app, token, id: id), [false, false, false, false], "live before the ban")
        }
        let cookie = try await app.consoleOwner()
        let page = "/console/accounts/\(id)"

        let banned = try app.consoleSubmit("\(page)/ban", cookie: cookie, fields: [:], from: page)
        XCTAssertEqual(banned.status, 303, banned.text)
        XCTAssertEqual(banned.header("Location"), "\(page)?done=banned")
        for token in [access, goTrue] {
            XCTAssertEqual(try refused(app, token, id: id), [true, true, true, true])
        }
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/refresh", json: ["refresh_token": refresh]).status, 401)
        let v1Refused = try logIn(app, email)
        XCTAssertEqual(v1Refused.status, 403, v1Refused.text)
        XCTAssertEqual(try v1Refused.jsonObject()["code"] as? String, "user_banned")
        let goTrueRefused = try goTrueLogIn(app, email)
        XCTAssertEqual(goTrueRefused.status, 400, goTrueRefused.text)
        XCTAssertEqual(try goTrueRefused.jsonObject()["code"] as? String, "user_banned")
        let shown = try app.consoleGet("\(page)?done=banned", cookie: cookie).text
        XCTAssertTrue(shown.contains("<dt>Status</dt><dd>disabled"), shown)
        XCTAssertTrue(shown.contains("<dt>Active sessions</dt><dd>0</dd>"), "its sessions ended")
        XCTAssertTrue(shown.contains("action=\"\(page)/enable\""))
        let bans = try await audited(app, "account.ban")
        XCTAssertEqual(bans, 1)

        let enabled = try app.consoleSubmit("\(page)/enable", cookie: cookie, fields: [:], from: page)
        XCTAssertEqual(enabled.status, 303, enabled.text)
        XCTAssertEqual(try logIn(app, email).status, 200, "re-enabled: sign-in works")
        XCTAssertEqual(try goTrueLogIn(app, email).status, 200)
        XCTAssertEqual(try refused(app, access, id: id), [true, true, true, true], "the ended sessions stay ended")
        XCTAssertTrue(try app.consoleGet(page, cookie: cookie).text.contains("<dt>Status</dt><dd>active</dd>"))
        let enables = try await audited(app, "account.enable")
        XCTAssertEqual(enables, 1)
        XCTAssertEqual(try app.consolePost("\(page)/ban", cookie: cookie, fields: [:]).status, 403, "CSRF-checked")
    }

    /// The rule is where sessions are resolved, not only in the ban's revocation: an account disabled with its
    /// sessions left alive (by hand in the database) is still refused.
    func testTheBanIsCheckedWhereSessionsAreResolved() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let id = user.id.uuidString.lowercased()
        XCTAssertEqual(try refused(app, user.accessToken, id: id), [false, false, false, false])
        try await app.withConnection {
            try $0.query("UPDATE users SET banned_until = now() + interval '1 hour' WHERE id = \(user.id)")
        }
        XCTAssertEqual(try refused(app, user.accessToken, id: id), [true, true, true, true])
        try await app.withConnection {
            try $0.query("UPDATE users SET banned_until = now() - interval '1 second' WHERE id = \(user.id)")
        }
        XCTAssertEqual(
            try refused(app, user.accessToken, id: id), [false, false, false, false], "a ban that ended is no ban")
    }
}
