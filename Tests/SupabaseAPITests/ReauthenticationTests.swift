import Foundation
import TestSupport
import XCTest

/// GoTrue's secure password change in supabase-swift's request shapes: `update(user: UserAttributes(password:))`
/// is `PUT /auth/v1/user {"password"}`, `reauthenticate()` is `GET /auth/v1/reauthenticate` with no body, and
/// `UserAttributes(password:nonce:)` adds `"nonce"`. Also: wrong passwords on `DELETE /v1/me` count as failed logins.
final class ReauthenticationTests: XCTestCase {
    private var app: TestApp!
    private let password = "s3cret-Passw0rd-3720f14f"

    override func setUp() async throws {
        app = try await TestApp.start { $0.smtpURL = "smtp://127.0.0.1:1" }  // mail stays in the outbox
    }
    override func tearDown() async throws { await app.stop() }

    private func headers(_ bearer: String? = nil) -> [String: String] {
        [
            "Accept": "*/*", "X-Supabase-Api-Version": "2024-01-01", "X-Client-Info": "supabase-swift/2.55.1",
            "Authorization": "Bearer \(bearer ?? app.anonKey)", "Content-Type": "application/json",
            "Apikey": app.anonKey,
        ]
    }

    private func changePassword(_ password: String, nonce: String?, _ token: String) throws -> HTTPTestResponse {
        let nonceField = nonce.map { #","nonce":"\#($0)""# } ?? ""
        return try send("PUT", "/auth/v1/user", #"{"password":"\#(password)"\#(nonceField)}"#, bearer: token)
    }

    private func send(_ method: String, _ path: String, _ body: String? = nil, bearer: String? = nil) throws
        -> HTTPTestResponse
    {
        try app.client.send(method, path, headers: headers(bearer), body: body.map { Array($0.utf8) })
    }

    /// Signs up through /auth/v1; answers the access token and ages its session by `hours`.
    private func session(_ email: String, agedHours hours: Int) async throws -> String {
        let answer = try send("POST", "/auth/v1/signup", #"{"email":"\#(email)","password":"\#(password)"}"#)
        XCTAssertEqual(answer.status, 200, answer.text)
        let token = try XCTUnwrap(try answer.jsonObject()["access_token"] as? String)
        try await app.withConnection {
            try $0.query(
                """
                UPDATE sessions SET created_at = now() - \(hours) * interval '1 hour'
                WHERE user_id = (SELECT id FROM users WHERE email = \(email))
                """)
        }
        return token
    }

    private func mailedNonce(_ email: String) async throws -> String {
        let body = try await app.withConnection {
            try $0.query("SELECT body FROM mail_outbox WHERE recipient = \(email) ORDER BY id DESC LIMIT 1")[0]
                .decode("body", as: String.self)
        }
        let line = try XCTUnwrap(body.split(separator: "\n").first { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        return String(line)
    }

    private func errorCode(_ response: HTTPTestResponse) -> String? {
        (try? response.jsonObject())?["error_code"] as? String ?? (try? response.jsonObject())?["code"] as? String
    }

    func testAnOldSessionChangesThePasswordOnlyWithTheMailedNonce() async throws {
        let email = "old-session@example.com"
        let token = try await session(email, agedHours: 25)
        let without = try send("PUT", "/auth/v1/user", #"{"password":"n3w-Passw0rd-aaaa"}"#, bearer: token)
        XCTAssertEqual(without.status, 400, without.text)
        XCTAssertEqual(errorCode(without), "reauthentication_needed")

        let asked = try send("GET", "/auth/v1/reauthenticate", bearer: token)
        XCTAssertEqual(asked.status, 200, asked.text)
        XCTAssertEqual(asked.text, "{}")
        let again = try send("GET", "/auth/v1/reauthenticate", bearer: token)
        XCTAssertEqual(again.status, 429, "one mail a minute")
        let wait = try XCTUnwrap(Int(again.header("Retry-After") ?? ""), "every 429 says when to come back")
        XCTAssert((1...60).contains(wait), "the rest of the minute: \(wait)")
        let nonce = try await mailedNonce(email)

        let wrongNonce = nonce == "000000" ? "111111" : "000000"
        let wrong = try changePassword("n3w-Passw0rd-aaaa", nonce: wrongNonce, token)
        XCTAssertEqual(wrong.status, 422, wrong.text)
        XCTAssertEqual(errorCode(wrong), "reauthentication_not_valid")

        let changed = try changePassword("n3w-Passw0rd-aaaa", nonce: nonce, token)
        XCTAssertEqual(changed.status, 200, changed.text)
        let login = try send(
            "POST", "/auth/v1/token?grant_type=password",
            #"{"email":"\#(email)","password":"n3w-Passw0rd-aaaa"}"#)
        XCTAssertEqual(login.status, 200, "the new password works")

        let replayed = try changePassword("n3w-Passw0rd-bbbb", nonce: nonce, token)
        XCTAssertEqual(replayed.status, 422, "a nonce is spent by the change")
    }

    func testWrongNoncesVoidTheNonce() async throws {
        let email = "guesser@example.com"
        let token = try await session(email, agedHours: 48)
        XCTAssertEqual(try send("GET", "/auth/v1/reauthenticate", bearer: token).status, 200)
        let nonce = try await mailedNonce(email)
        let wrong = nonce == "000000" ? "111111" : "000000"
        for _ in 0..<5 {
            let guess = try changePassword("n3w-Passw0rd-aaaa", nonce: wrong, token)
            XCTAssertEqual(guess.status, 422)
        }
        let right = try changePassword("n3w-Passw0rd-aaaa", nonce: nonce, token)
        XCTAssertEqual(right.status, 422, "five wrong guesses void the nonce")
    }

    func testAFreshSessionChangesThePasswordDirectly() async throws {
        let token = try await session("fresh@example.com", agedHours: 23)
        let changed = try send("PUT", "/auth/v1/user", #"{"password":"n3w-Passw0rd-aaaa"}"#, bearer: token)
        XCTAssertEqual(changed.status, 200, changed.text)
    }

    func testWrongPasswordsOnAccountDeletionAreThrottledLikeLogins() async throws {
        let credentials = ["email": "deleter@x.io", "password": password]
        let signUp = try app.client.send("POST", "/v1/auth/signup", json: credentials)
        XCTAssertEqual(signUp.status, 201)
        let token = try XCTUnwrap(try signUp.jsonObject()["access_token"] as? String)
        let authorization = ["Authorization": "Bearer \(token)"]
        for _ in 0..<10 {
            let wrong = try app.client.send("DELETE", "/v1/me", json: ["password": "wrong"], headers: authorization)
            XCTAssertEqual(wrong.status, 401, wrong.text)
        }
        let limited = try app.client.send("DELETE", "/v1/me", json: ["password": password], headers: authorization)
        XCTAssertEqual(limited.status, 429, "past ten failures, even the right password waits: \(limited.text)")
        XCTAssertNotNil(limited.header("Retry-After"))
        let login = try app.client.send(
            "POST", "/v1/auth/login", json: ["email": "deleter@x.io", "password": password])
        XCTAssertEqual(login.status, 429, "the same count as logins")
    }
}
