import AuthJWT
import Foundation
import TestSupport
import XCTest

/// Password recovery and change as supabase-swift finishes them (PKCE by default): the mail's link through
/// `GET /auth/v1/verify`, `grant_type=pkce`, `POST /auth/v1/verify`, `PUT /auth/v1/user {password}`, and the
/// redirect allow-list. Requests as the client sends them (issue 15's log #381, #384, #547).
final class SupabaseRecoveryTests: XCTestCase {
    private var app: TestApp!
    private let password = "s3cret-Passw0rd-3720f14f"
    private let verifier = "uBD08PaIOkB5RSntKOqlq5Y3WTUPuok13QVGrGLBB2o-verifier-of-the-client"

    override func setUp() async throws {
        app = try await TestApp.start {
            $0.smtpURL = "smtp://127.0.0.1:1"  // mail stays in the outbox, where the test reads it
            $0.supabasePublicURL = "https://quotes.example.com"
        }
    }
    override func tearDown() async throws { await app.stop() }

    private var challenge: String { Base64URL.encode(Digest.sha256(Array(verifier.utf8))) }

    private func swiftAuthHeaders(_ bearer: String? = nil) -> [String: String] {
        [
            "Accept": "*/*", "Accept-Encoding": "deflate, gzip, br, zstd", "X-Supabase-Api-Version": "2024-01-01",
            "X-Client-Info": "supabase-swift/2.55.1; platform=Linux",
            "Authorization": "Bearer \(bearer ?? app.anonKey)",
            "Content-Type": "application/json", "Apikey": app.anonKey, "Connection": "keep-alive",
            "Accept-Language": "en",
        ]
    }

    private func post(_ path: String, _ body: String, bearer: String? = nil) throws -> HTTPTestResponse {
        try app.client.send("POST", path, headers: swiftAuthHeaders(bearer), body: Array(body.utf8))
    }

    /// Signs up through /auth/v1 and answers the session's access token.
    private func signUp(_ email: String) throws -> String {
        let session = try post("/auth/v1/signup", #"{"email":"\#(email)","password":"\#(password)"}"#)
        XCTAssertEqual(session.status, 200)
        return try XCTUnwrap(try session.jsonObject()["access_token"] as? String)
    }

    /// The link of the last mail to `email`, as a path and query on this server.
    private func mailedLink(_ email: String) async throws -> (path: String, token: String) {
        let body = try await app.withConnection {
            try $0.query("SELECT body FROM mail_outbox WHERE recipient = \(email) ORDER BY id DESC LIMIT 1")[0].decode(
                "body", as: String.self)
        }
        let line = try XCTUnwrap(
            body.split(separator: "\n").first { $0.hasPrefix("https://quotes.example.com/auth/v1/verify?") })
        let path = String(line.dropFirst("https://quotes.example.com".count))
        let token = try XCTUnwrap(URLComponents(string: String(line))?.queryItems?.first { $0.name == "token" }?.value)
        return (path, token)
    }

    private func location(_ path: String) throws -> String {
        let response = try app.client.get(path)
        XCTAssertEqual(response.status, 303)
        return try XCTUnwrap(response.header("Location"))
    }

    func testPKCERecoveryThroughTheMailLinkAndCodeExchange() async throws {
        let email = "qv-swift-a-3720f14f@example.com"
        let token = try signUp(email)
        // #381: the client still sends the user's token; the mail's link carries the allowed redirect.
        let recover = try post(
            "/auth/v1/recover?redirect_to=quotevault%3A//reset-password",
            #"{"code_challenge_method":"s256","code_challenge":"\#(challenge)","email":"\#(email)"}"#, bearer: token)
        XCTAssertEqual(recover.status, 200)
        XCTAssertEqual(recover.text, "{}")
        let link = try await mailedLink(email)
        XCTAssertTrue(link.path.hasSuffix("&type=recovery&redirect_to=quotevault%3A%2F%2Freset-password"), link.path)

        let redirect = try location(link.path)
        XCTAssertTrue(redirect.hasPrefix("quotevault://reset-password?code="), redirect)
        let code = String(redirect.dropFirst("quotevault://reset-password?code=".count))
        // The link works once.
        XCTAssertTrue(
            try location(link.path).hasPrefix("quotevault://reset-password#error=access_denied&error_code=otp_expired"))

        let wrong = try post(
            "/auth/v1/token?grant_type=pkce",
            #"{"auth_code":"\#(code)","code_verifier":"\#(String(repeating: "x", count: 50))"}"#)
        XCTAssertEqual(wrong.status, 403)
        XCTAssertEqual(try wrong.jsonObject()["code"] as? String, "bad_code_verifier")
        let exchanged = try post(
            "/auth/v1/token?grant_type=pkce", #"{"auth_code":"\#(code)","code_verifier":"\#(verifier)"}"#)
        XCTAssertEqual(exchanged.status, 200)
        let session = try exchanged.jsonObject()
        XCTAssertNotNil(session["expires_at"] as? Int)
        XCTAssertEqual((session["user"] as? [String: Any])?["email"] as? String, email)
        let again = try post(
            "/auth/v1/token?grant_type=pkce", #"{"auth_code":"\#(code)","code_verifier":"\#(verifier)"}"#)
        XCTAssertEqual(again.status, 404)
        XCTAssertEqual(try again.jsonObject()["code"] as? String, "flow_state_not_found")

        // #547 with the recovered session: the new password works, the old one and the other sessions do not.
        let recovered = try XCTUnwrap(session["access_token"] as? String)
        let weak = try app.client.send(
            "PUT", "/auth/v1/user", headers: swiftAuthHeaders(recovered), body: Array(#"{"password":"short"}"#.utf8))
        XCTAssertEqual(weak.status, 422)
        XCTAssertEqual(try weak.jsonObject()["code"] as? String, "weak_password")
        let same = try app.client.send(
            "PUT", "/auth/v1/user", headers: swiftAuthHeaders(recovered),
            body: Array(#"{"password":"\#(password)"}"#.utf8))
        XCTAssertEqual(same.status, 422)
        XCTAssertEqual(try same.jsonObject()["code"] as? String, "same_password")
        let changed = try app.client.send(
            "PUT", "/auth/v1/user", headers: swiftAuthHeaders(recovered),
            body: Array(#"{"password":"\#(password)-new"}"#.utf8))
        XCTAssertEqual(changed.status, 200)
        XCTAssertEqual(try changed.jsonObject()["email"] as? String, email)
        XCTAssertEqual(
            try app.client.get("/auth/v1/user", headers: swiftAuthHeaders(token)).status, 403,
            "other sessions are revoked")
        XCTAssertEqual(
            try app.client.get("/auth/v1/user", headers: swiftAuthHeaders(recovered)).status, 200, "this one stays")
        XCTAssertEqual(
            try post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"\#(password)"}"#).status,
            400)
        XCTAssertEqual(
            try post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"\#(password)-new"}"#)
                .status, 200)
    }

    func testAPasswordChangedThroughAuthUserVoidsTheResetMailsStillOutstanding() async throws {
        let email = "changed-meanwhile@example.com"
        let token = try signUp(email)
        _ = try post("/auth/v1/recover", #"{"email":"\#(email)"}"#)
        let outstanding = try await mailedLink(email)
        let changed = try app.client.send(
            "PUT", "/auth/v1/user", headers: swiftAuthHeaders(token),
            body: Array(#"{"password":"\#(password)-new"}"#.utf8))
        XCTAssertEqual(changed.status, 200)
        // The mail sent before the change can no longer undo it: neither its link nor its token works.
        XCTAssertTrue(try location(outstanding.path).contains("error_code=otp_expired"))
        let verify = try post("/auth/v1/verify", #"{"token_hash":"\#(outstanding.token)","type":"recovery"}"#)
        XCTAssertGreaterThanOrEqual(verify.status, 400)
        XCTAssertEqual(
            try post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"\#(password)-new"}"#)
                .status, 200)
    }

    func testAnAuthorizationCodeExpiresAfterFiveMinutes() async throws {
        let email = "expiring@example.com"
        _ = try signUp(email)
        _ = try post(
            "/auth/v1/recover",
            #"{"code_challenge_method":"s256","code_challenge":"\#(challenge)","email":"\#(email)"}"#)
        let redirect = try location(try await mailedLink(email).path)
        let code = try XCTUnwrap(redirect.components(separatedBy: "code=").last)
        try await app.withConnection {
            _ = try $0.query("UPDATE recovery_flows SET code_issued_at = now() - interval '301 seconds'")
        }
        let expired = try post(
            "/auth/v1/token?grant_type=pkce", #"{"auth_code":"\#(code)","code_verifier":"\#(verifier)"}"#)
        XCTAssertEqual(expired.status, 403)
        XCTAssertEqual(try expired.jsonObject()["code"] as? String, "flow_state_expired")
    }

    /// Signs up `email`, asks for a recovery mail to `redirectTo` (query-encoded) and follows the mail's link.
    private func followedRecoveryLink(_ email: String, redirectTo: String) async throws -> String {
        _ = try signUp(email)
        _ = try post("/auth/v1/recover?redirect_to=\(redirectTo)", #"{"email":"\#(email)"}"#)
        return try location(try await mailedLink(email).path)
    }

    func testTheLocationBuiltFromRedirectToIsPercentEncoded() async throws {
        // An allowed prefix followed by a space, TAB, DEL, ESC, `é` and an already-encoded `%2F`.
        let redirect = try await followedRecoveryLink(
            "encoded-redirect@example.com", redirectTo: "quotevault%3A%2F%2Freset%20me%09%7F%1B%C3%A9%252F")
        XCTAssertTrue(redirect.hasPrefix("quotevault://reset%20me%09%7F%1B%C3%A9%2F#access_token="), redirect)
        XCTAssertTrue(redirect.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "no raw space, control or non-ASCII byte")
    }

    func testImplicitFlowAndVerifyWithTheMailsToken() async throws {
        let email = "implicit@example.com"
        let redirect = try await followedRecoveryLink(email, redirectTo: "quotevault%3A%2F%2Freset")
        XCTAssertTrue(redirect.hasPrefix("quotevault://reset#access_token="), redirect)
        XCTAssertTrue(redirect.contains("&token_type=bearer&type=recovery"))
        let fragment = try XCTUnwrap(
            URLComponents(string: "x:?" + (redirect.components(separatedBy: "#").last ?? ""))?.queryItems)
        let accessToken = try XCTUnwrap(fragment.first { $0.name == "access_token" }?.value)
        XCTAssertEqual(try app.client.get("/auth/v1/user", headers: swiftAuthHeaders(accessToken)).status, 200)
        XCTAssertNotNil(fragment.first { $0.name == "refresh_token" }?.value)

        // #384: verifyOTP(tokenHash:type:.recovery) with the mail's token, once.
        _ = try post("/auth/v1/recover", #"{"email":"\#(email)"}"#)
        let token = try await mailedLink(email).token
        let verified = try post(
            "/auth/v1/verify", #"{"token_hash":"\#(token)","type":"recovery"}"#, bearer: accessToken)
        XCTAssertEqual(verified.status, 200)
        XCTAssertNotNil(try verified.jsonObject()["refresh_token"] as? String)
        let reused = try post("/auth/v1/verify", #"{"token_hash":"\#(token)","type":"recovery"}"#)
        XCTAssertEqual(reused.status, 403)
        XCTAssertEqual(try reused.jsonObject()["code"] as? String, "otp_expired")

        // verifyOTP(email:token:type:.recovery): the token must be that account's.
        _ = try post("/auth/v1/recover", #"{"email":"\#(email)"}"#)
        let third = try await mailedLink(email).token
        XCTAssertEqual(
            try post("/auth/v1/verify", #"{"email":"someone.else@example.com","token":"\#(third)","type":"recovery"}"#)
                .status, 403)
        XCTAssertEqual(
            try post("/auth/v1/verify", #"{"email":"\#(email.uppercased())","token":"\#(third)","type":"recovery"}"#)
                .status, 200)
        XCTAssertEqual(try post("/auth/v1/verify", #"{"token_hash":"\#(third)","type":"signup"}"#).status, 400)
    }

    func testRedirectsOnlyToTheAllowList() async throws {
        let email = "redirect@example.com"
        _ = try signUp(email)
        _ = try post("/auth/v1/recover?redirect_to=https%3A%2F%2Fevil.example%2Fsteal", #"{"email":"\#(email)"}"#)
        let link = try await mailedLink(email)
        XCTAssertTrue(link.path.hasSuffix("redirect_to=quotevault%3A%2F%2Freset-password"), link.path)
        // A link edited to point elsewhere still lands on the site URL.
        let edited = link.path.replacingOccurrences(
            of: "redirect_to=quotevault%3A%2F%2Freset-password", with: "redirect_to=https%3A%2F%2Fevil.example")
        XCTAssertTrue(try location(edited).hasPrefix("quotevault://reset-password#access_token="))
        XCTAssertTrue(
            try location("/auth/v1/verify?token=nope&type=recovery&redirect_to=javascript%3Aalert(1)")
                .hasPrefix("quotevault://reset-password#error=access_denied"))
        let plain = try post(
            "/auth/v1/recover",
            #"{"code_challenge_method":"plain","code_challenge":"\#(challenge)","email":"\#(email)"}"#)
        XCTAssertEqual(plain.status, 400)
        let short = try post(
            "/auth/v1/recover", #"{"code_challenge_method":"s256","code_challenge":"abc","email":"\#(email)"}"#)
        XCTAssertEqual(short.status, 400)
    }

    func testAConfiguredAllowListMatchesWholeHosts() async throws {
        let custom = try await startTestApp {
            $0.smtpURL = "smtp://127.0.0.1:1"
            $0.supabaseRedirectAllowList = ["https://app.example.com", "quotevault://"]
        }
        for (requested, followed) in [
            ("https://app.example.com/reset", true), ("https://app.example.com", true),
            ("https://app.example.com.evil.com/x", false), ("https://app.example.comx", false),
            ("quotevault://anything", true), ("quotevaultx://a", false),
        ] {
            let encoded = requested.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let response = try custom.client.get("/auth/v1/verify?token=bad&type=recovery&redirect_to=\(encoded)")
            let location = response.header("Location") ?? ""
            XCTAssertEqual(location.hasPrefix(requested + "#error="), followed, requested)
            if !followed {
                XCTAssertTrue(location.hasPrefix(custom.application.context.configuration.passwordResetURL + "#"))
            }
        }
    }
}
