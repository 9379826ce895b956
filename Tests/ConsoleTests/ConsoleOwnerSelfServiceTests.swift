import AuthJWT
import Foundation
import TestSupport
import XCTest

/// What an owner does for themself: a new sign-in link voids the earlier unused ones; they see and end their other
/// console sessions; they replace their second factor with a fresh enrolment.
final class ConsoleOwnerSelfServiceTests: XCTestCase {
    func testANewSignInLinkVoidsTheEarlierUnusedOnes() async throws {
        let app = try await startTestApp()
        let first = try await app.addOwner("twice@example.com")
        let second = try await app.addOwner("twice@example.com")
        let refused = try app.consolePost("/console/sign-in", fields: ["token": first])
        XCTAssertEqual(refused.status, 400, "the earlier link is void")
        XCTAssertNil(refused.header("Set-Cookie"))
        _ = try app.signInToConsole(token: second)
    }

    func testAnOwnerSeesAndEndsTheirOtherSessionsOnly() async throws {
        let app = try await startTestApp()
        let mine = try app.signInToConsole(token: try await app.addOwner("me@example.com"))
        let myOther = try app.signInToConsole(token: try await app.addOwner("me@example.com"))
        let theirs = try await app.consoleOwner("them@example.com")
        let page = try app.consoleGet("/console/security", cookie: mine).text
        XCTAssertEqual(page.components(separatedBy: "<tr><td data-label=\"Started\">").count - 1, 2, page)
        XCTAssertTrue(page.contains("this session"))
        let otherID = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT s.id FROM console_sessions s JOIN console_owners o ON o.id = s.owner_id
                WHERE o.email = 'me@example.com' ORDER BY s.created_at DESC LIMIT 1
                """)[0].decode("id", as: UUID.self)
        }.uuidString.lowercased()
        let theirID = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT s.id FROM console_sessions s JOIN console_owners o ON o.id = s.owner_id
                WHERE o.email = 'them@example.com'
                """)[0].decode("id", as: UUID.self)
        }.uuidString.lowercased()
        XCTAssertTrue(page.contains("action=\"/console/security/sessions/\(otherID)/end\""))

        let notMine = try app.consoleSubmit(
            "/console/security/sessions/\(theirID)/end", cookie: mine, fields: [:], from: "/console/security")
        XCTAssertEqual(notMine.status, 303)
        XCTAssertEqual(try app.consoleGet("/console", cookie: theirs).status, 200, "another owner's session lives")
        XCTAssertEqual(
            try app.consolePost("/console/security/sessions/\(otherID)/end", cookie: mine, fields: [:]).status, 403,
            "CSRF-checked")
        let ended = try app.consoleSubmit(
            "/console/security/sessions/\(otherID)/end", cookie: mine, fields: [:], from: "/console/security")
        XCTAssertEqual(ended.header("Location"), "/console/security?done=sessions_ended")
        XCTAssertEqual(try app.consoleGet("/console", cookie: myOther).status, 303, "that session ended")
        XCTAssertEqual(try app.consoleGet("/console", cookie: mine).status, 200, "this one did not")

        let third = try app.signInToConsole(token: try await app.addOwner("me@example.com"))
        let all = try app.consoleSubmit(
            "/console/security/sessions/end", cookie: mine, fields: [:], from: "/console/security")
        XCTAssertEqual(all.status, 303)
        XCTAssertEqual(try app.consoleGet("/console", cookie: third).status, 303)
        XCTAssertEqual(try app.consoleGet("/console", cookie: mine).status, 200)
        XCTAssertEqual(try app.consoleGet("/console", cookie: theirs).status, 200)
    }

    func testTheSecondFactorIsReplacedByAFreshEnrolmentWithACodeOfEach() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner("reset@example.com")
        let old = try XCTUnwrap(
            Base32.decode(
                try XCTUnwrap(
                    TestApp.hiddenValue("secret", in: try app.consoleGet("/console/security", cookie: cookie).text))))
        let now = TOTP.step(at: Date())
        XCTAssertEqual(
            try app.consoleSubmit(
                "/console/security/totp", cookie: cookie,
                fields: ["secret": Base32.encode(old), "code": TOTP(secret: old).code(step: now)],
                from: "/console/security"
            ).status, 303)
        let enrolled = try app.consoleGet("/console/security", cookie: cookie).text
        XCTAssertTrue(enrolled.contains("href=\"/console/security?replace=1\""), enrolled)

        let form = try app.consoleGet("/console/security?replace=1", cookie: cookie).text
        XCTAssertTrue(form.contains("name=\"current_code\""), form)
        let newSecret = try XCTUnwrap(TestApp.hiddenValue("secret", in: form))
        let fresh = TOTP(secret: try XCTUnwrap(Base32.decode(newSecret)))
        let wrongCurrent = try app.consoleSubmit(
            "/console/security/totp", cookie: cookie,
            fields: [
                "secret": newSecret, "code": fresh.code(step: now + 1), "replace": "1",
                "current_code": fresh.code(step: now + 1),
            ], from: "/console/security?replace=1")
        XCTAssertEqual(wrongCurrent.status, 422, wrongCurrent.text)
        XCTAssertTrue(wrongCurrent.text.contains("current authenticator does not match"))
        let replaced = try app.consoleSubmit(
            "/console/security/totp", cookie: cookie,
            fields: [
                "secret": newSecret, "code": fresh.code(step: now + 1), "replace": "1",
                "current_code": TOTP(secret: old).code(step: now + 1),
            ], from: "/console/security?replace=1")
        XCTAssertEqual(replaced.status, 303, replaced.text)
        let stored = try await app.withConnection { connection in
            try connection.query("SELECT totp_secret FROM console_owners WHERE email = 'reset@example.com'")[0]
                .decode("totp_secret", as: [UInt8].self)
        }
        XCTAssertEqual(Base32.encode(stored), newSecret)
        let audited = try await app.withConnection { connection in
            try connection.query(
                "SELECT count(*)::int8 AS n FROM console_audit WHERE action = 'owner.second_factor_replaced'"
            )[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(audited, 1)
    }
}
