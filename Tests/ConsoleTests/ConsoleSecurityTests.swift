import AuthJWT
import Foundation
import QuoteVault
import TestSupport
import XCTest

/// The console's defences: CSRF tokens, the security headers on every answer, the TOTP second factor.
final class ConsoleSecurityTests: XCTestCase {
    func testStateChangingPostsWithoutTheSessionsCSRFTokenAreRefusedAndChangeNothing() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let other = try await app.consoleOwner()
        let otherToken = try XCTUnwrap(TestApp.csrfToken(in: try app.consoleGet("/console", cookie: other).text))
        let secret = try TOTP.generateSecret()
        let code = TOTP(secret: secret).code(step: TOTP.step(at: Date()))
        let enrol = ["secret": Base32.encode(secret), "code": code]
        let tokens: [(String, String?)] = [
            ("missing", nil), ("wrong", "x" + otherToken.dropFirst()), ("another session's", otherToken),
        ]
        for (name, token) in tokens {
            var fields = enrol
            fields["csrf_token"] = token
            let refused = try app.consolePost("/console/security/totp", cookie: cookie, fields: fields)
            XCTAssertEqual(refused.status, 403, "\(name) token")
            XCTAssertTrue(refused.text.contains("Nothing was changed"), refused.text)
            XCTAssertEqual(refused.header("Content-Security-Policy"), TestApp.consoleContentSecurityPolicy)
            let signOut = try app.consolePost(
                "/console/sign-out", cookie: cookie, fields: token.map { ["csrf_token": $0] } ?? [:])
            XCTAssertEqual(signOut.status, 403, "\(name) token")
        }
        let enrolled = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_owners WHERE totp_secret IS NOT NULL")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(enrolled, 0, "nothing was enrolled")
        XCTAssertEqual(try app.consoleGet("/console", cookie: cookie).status, 200, "still signed in")
        let audited = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT count(*)::int8 AS n FROM console_audit WHERE action NOT IN ('owner.add', 'owner.sign_in')
                """)[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(audited, 0)
    }

    func testEveryConsoleAnswerCarriesTheSecurityHeaders() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let link = try await app.addOwner()
        let answers: [(String, HTTPTestResponse)] = [
            ("overview", try app.consoleGet("/console", cookie: cookie)),
            ("quotes", try app.consoleGet("/console/quotes", cookie: cookie)),
            ("new quote", try app.consoleGet("/console/quotes/new", cookie: cookie)),
            ("import", try app.consoleGet("/console/quotes/import", cookie: cookie)),
            ("audit", try app.consoleGet("/console/audit", cookie: cookie)),
            ("security", try app.consoleGet("/console/security", cookie: cookie)),
            ("stylesheet", try app.consoleGet("/console/static/console.css")),
            ("sign-in", try app.consoleGet("/console/sign-in")),
            ("sign-in link", try app.consoleGet("/console/sign-in?token=\(link)")),
            ("bad link", try app.consoleGet("/console/sign-in?token=nope")),
            ("not found", try app.consoleGet("/console/no-such-page", cookie: cookie)),
            ("redirect", try app.consoleGet("/console")),
            ("no session post", try app.consolePost("/console/sign-out", fields: [:])),
            ("csrf refusal", try app.consolePost("/console/sign-out", cookie: cookie, fields: [:])),
        ]
        for (name, response) in answers {
            XCTAssertEqual(response.header("Content-Security-Policy"), TestApp.consoleContentSecurityPolicy, name)
            XCTAssertEqual(response.header("X-Frame-Options"), "DENY", name)
            XCTAssertEqual(response.header("Cache-Control"), "no-store", name)
            XCTAssertEqual(response.header("Referrer-Policy"), "no-referrer", name)
            // No inline script or style anywhere (the CSP would block them anyway).
            XCTAssertFalse(response.text.contains("<script"), name)
            XCTAssertFalse(response.text.contains("<style"), name)
            XCTAssertFalse(response.text.contains("style="), name)
        }
        for (name, response) in answers.prefix(6) { XCTAssertEqual(response.status, 200, name) }
        XCTAssertTrue(answers[0].1.text.contains("href=\"/console/static/console.css\""))
        XCTAssertEqual(answers[6].1.status, 200)
        XCTAssertEqual(answers[6].1.header("Content-Type"), "text/css; charset=utf-8")
        XCTAssertTrue(answers[6].1.text.contains("@media"), "responsive rules")
        XCTAssertEqual(answers[10].1.status, 404)
    }

    func testSecondFactorEnrolmentThenSignInNeedsTheRightCodeOnce() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner("totp@example.com")
        let page = try app.consoleGet("/console/security", cookie: cookie).text
        let secretText = try XCTUnwrap(TestApp.hiddenValue("secret", in: page))
        XCTAssertTrue(page.contains("otpauth://totp/"), page)
        XCTAssertTrue(
            page.contains("aria-label=\"QR code of the otpauth URI below\"><svg xmlns=\"http://www.w3.org/2000/svg\"")
                && !page.contains("<script"),
            "the QR code is an inline SVG drawn by the server (decoded in QRCodeTests and the browser test)")
        let secret = try XCTUnwrap(Base32.decode(secretText))
        let totp = TOTP(secret: secret)
        let now = TOTP.step(at: Date())
        let wrong = String(format: "%06d", (Int(totp.code(step: now))! + 1) % 1_000_000)
        let refused = try app.consoleSubmit(
            "/console/security/totp", cookie: cookie,
            fields: ["secret": secretText, "code": wrong])
        XCTAssertEqual(refused.status, 422)
        XCTAssertTrue(refused.text.contains("does not match"))
        let enrolled = try app.consoleSubmit(
            "/console/security/totp", cookie: cookie,
            fields: ["secret": secretText, "code": totp.code(step: now)])
        XCTAssertEqual(enrolled.status, 303, enrolled.text)
        XCTAssertTrue(try app.consoleGet("/console/security", cookie: cookie).text.contains("is enrolled"))
        // Never replaced from a session alone.
        let other = try TOTP.generateSecret()
        let replace = try app.consoleSubmit(
            "/console/security/totp", cookie: cookie,
            fields: [
                "secret": Base32.encode(other), "code": TOTP(secret: other).code(step: now),
            ])
        XCTAssertEqual(replace.status, 409, replace.text)
        let stored = try await app.withConnection { connection in
            try connection.query("SELECT totp_secret FROM console_owners WHERE email = 'totp@example.com'")[0]
                .decode("totp_secret", as: [UInt8].self)
        }
        XCTAssertEqual(stored, secret)

        // Sign-in now asks for the code: without it or with a wrong one, no session and the link is not spent.
        let link = try await app.addOwner("totp@example.com")
        XCTAssertTrue(try app.consoleGet("/console/sign-in?token=\(link)").text.contains("name=\"code\""))
        let noCode = try app.consolePost("/console/sign-in", fields: ["token": link])
        XCTAssertEqual(noCode.status, 401)
        XCTAssertNil(noCode.header("Set-Cookie"))
        let wrongCode = try app.consolePost("/console/sign-in", fields: ["token": link, "code": wrong])
        XCTAssertEqual(wrongCode.status, 401)
        XCTAssertNil(wrongCode.header("Set-Cookie"))
        // The enrolment's code was used: it cannot be replayed; the next step's code signs in.
        let replay = try app.consolePost("/console/sign-in", fields: ["token": link, "code": totp.code(step: now)])
        XCTAssertEqual(replay.status, 401, "a code is used once")
        let next = try app.signInToConsole(token: link, code: totp.code(step: now + 1))
        XCTAssertEqual(try app.consoleGet("/console", cookie: next).status, 200)
    }

    func testConsoleOffServesNothingUnderConsole() async throws {
        let app = try await TestApp.start { $0.consoleEnabled = false }
        defer { Task { await app.stop() } }
        let response = try app.consoleGet("/console/sign-in")
        XCTAssertEqual(response.status, 404)
        XCTAssertNil(response.header("Content-Security-Policy"))
        XCTAssertEqual(try app.consoleGet("/console/static/console.css").status, 404)
    }
}
