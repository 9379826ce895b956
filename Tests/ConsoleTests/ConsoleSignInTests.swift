import AuthJWT
import Foundation
import QuoteVault
import TestSupport
import XCTest

/// Owners and signing in to the console: one-time links, sessions, and what does not open it.
final class ConsoleSignInTests: XCTestCase {
    private let secret = "test-secret-0123456789-0123456789-abcdef"

    func testOwnerAddPrintsALinkThatSignsInOnceAndOwnerRemoveEndsIt() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let environment = [
            "DATABASE_URL": app.databaseURL, "JWT_SECRET": secret, "PORT": String(app.application.port),
            "LOG_LEVEL": "error",
        ]
        let add = try ServerProcess(["owner", "add", "Ada@Example.com"], environment: environment)
        let status = try await add.waitForExit()
        XCTAssertEqual(status, 0, add.output)
        let link = try XCTUnwrap(
            add.output.split(separator: "\n").first { $0.contains("/console/sign-in?token=") },
            add.output)
        XCTAssertTrue(link.hasPrefix("http://127.0.0.1:\(app.application.port)/console/sign-in?token="), String(link))
        let path = String(link.dropFirst("http://127.0.0.1:\(app.application.port)".count))
        let token = String(path.split(separator: "=")[1])

        // Opening the link shows the sign-in form; it spends nothing.
        let page = try app.consoleGet(path)
        XCTAssertEqual(page.status, 200, page.text)
        XCTAssertTrue(page.text.contains("Ada@Example.com"), page.text)
        XCTAssertEqual(try app.consoleGet(path).status, 200, "a GET does not spend the link")

        let cookie = try app.signInToConsole(token: token)
        let overview = try app.consoleGet("/console", cookie: cookie)
        XCTAssertEqual(overview.status, 200, overview.text)
        XCTAssertTrue(overview.text.contains("Ada@Example.com"))

        // Single use: the second sign-in with it is refused, and its page says so.
        let again = try app.consolePost("/console/sign-in", fields: ["token": token])
        XCTAssertEqual(again.status, 400, again.text)
        XCTAssertNil(again.header("Set-Cookie"))
        XCTAssertEqual(try app.consoleGet(path).status, 400)

        let list = try ServerProcess(["owner", "list"], environment: environment)
        _ = try await list.waitForExit()
        XCTAssertTrue(list.output.contains("Ada@Example.com"), list.output)

        let remove = try ServerProcess(["owner", "remove", "ada@example.com"], environment: environment)
        let removed = try await remove.waitForExit()
        XCTAssertEqual(removed, 0, remove.output)
        let afterRemoval = try app.consoleGet("/console", cookie: cookie)
        XCTAssertEqual(afterRemoval.status, 303, "a removed owner's session ends")
        XCTAssertEqual(afterRemoval.header("Location"), "/console/sign-in")
        let audit = try await app.withConnection { connection in
            try connection.query("SELECT owner_email, action, target FROM console_audit ORDER BY id").map {
                [
                    try $0.decode("owner_email", as: String.self), try $0.decode("action", as: String.self),
                    try $0.decode("target", as: String.self),
                ]
            }
        }
        XCTAssertEqual(
            audit,
            [
                ["quote-server (command line)", "owner.add", "Ada@Example.com"],
                ["Ada@Example.com", "owner.sign_in", "Ada@Example.com"],
                // The reused link's refusal is audited (issue 45).
                ["Ada@Example.com", "owner.sign_in_refused", "Ada@Example.com"],
                ["quote-server (command line)", "owner.remove", "ada@example.com"],
            ])
        let unknown = try ServerProcess(["owner", "remove", "ada@example.com"], environment: environment)
        let unknownStatus = try await unknown.waitForExit()
        XCTAssertNotEqual(unknownStatus, 0, unknown.output)
    }

    func testWrongExpiredAndReusedLinksAreRefused() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        for wrong in ["", "not-a-token", try OpaqueToken.generate()] {
            let response = try app.consolePost("/console/sign-in", fields: ["token": wrong])
            XCTAssertEqual(response.status, 400, "token \(wrong): \(response.text)")
            XCTAssertNil(response.header("Set-Cookie"))
        }
        let expired = try await app.addOwner("late@example.com")
        try await app.withConnection { connection in
            try connection.query(
                """
                UPDATE console_sign_in_tokens SET expires_at = now() - interval '1 second'
                WHERE token_hash = \(OpaqueToken.hash(expired))
                """)
        }
        XCTAssertEqual(try app.consoleGet("/console/sign-in?token=\(expired)").status, 400)
        let refused = try app.consolePost("/console/sign-in", fields: ["token": expired])
        XCTAssertEqual(refused.status, 400)
        XCTAssertNil(refused.header("Set-Cookie"))

        // A new link for the same owner works (not from another site's page); the old one stays dead.
        let fresh = try await app.addOwner("late@example.com")
        let crossSite = try app.consolePost(
            "/console/sign-in", fields: ["token": fresh],
            headers: ["Sec-Fetch-Site": "cross-site"])
        XCTAssertEqual(crossSite.status, 403)
        XCTAssertNil(crossSite.header("Set-Cookie"))
        _ = try app.signInToConsole(token: fresh)
        XCTAssertEqual(try app.consolePost("/console/sign-in", fields: ["token": fresh]).status, 400)
        XCTAssertEqual(try app.consolePost("/console/sign-in", fields: ["token": expired]).status, 400)
    }

    func testAppUserTokensAndSupabaseKeysOpenNothing() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let user = try await app.makeUser()
        let configuration = app.application.context.configuration
        let credentials: [(String, [String: String])] = [
            ("user token", ["Authorization": "Bearer \(user.accessToken)"]),
            (
                "anon key",
                [
                    "apikey": configuration.supabaseAnonKey,
                    "Authorization": "Bearer \(configuration.supabaseAnonKey)",
                ]
            ),
            (
                "service role key",
                [
                    "apikey": configuration.supabaseServiceRoleKey,
                    "Authorization": "Bearer \(configuration.supabaseServiceRoleKey)",
                ]
            ),
            ("user token as the cookie", ["Cookie": "qv_console=\(user.accessToken)"]),
            ("service role key as the cookie", ["Cookie": "qv_console=\(configuration.supabaseServiceRoleKey)"]),
        ]
        for (name, headers) in credentials {
            for path in ["/console", "/console/quotes", "/console/audit", "/console/security"] {
                let page = try app.consoleGet(path, headers: headers)
                XCTAssertEqual(page.status, 303, "\(name) on \(path)")
                XCTAssertEqual(page.header("Location"), "/console/sign-in", "\(name) on \(path)")
            }
            let post = try app.consolePost("/console/security/totp", fields: ["code": "123456"], headers: headers)
            XCTAssertEqual(post.status, 401, "\(name): \(post.text)")
            XCTAssertEqual(post.header("Content-Type"), "text/html; charset=utf-8")
        }
    }

    func testSessionCookieFlagsAndSecureOnlyBehindATrustedProxyOverHTTPS() async throws {
        let app = try await TestApp.start { $0.trustedProxies = ["127.0.0.1"] }
        defer { Task { await app.stop() } }
        func setCookie(_ headers: [String: String]) async throws -> String {
            let token = try await app.addOwner()
            let response = try app.consolePost("/console/sign-in", fields: ["token": token], headers: headers)
            XCTAssertEqual(response.status, 303, response.text)
            return try XCTUnwrap(response.header("Set-Cookie"))
        }
        let plain = try await setCookie([:])
        let attributes = Set(plain.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
        XCTAssertEqual(attributes, ["Path=/console", "HttpOnly", "SameSite=Strict"], plain)
        let behindProxy = try await setCookie(["X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"])
        XCTAssertTrue(behindProxy.hasSuffix("; Secure"), behindProxy)
        XCTAssertTrue(behindProxy.contains("HttpOnly") && behindProxy.contains("SameSite=Strict"))

        // Not from a trusted proxy, the header is not believed.
        let direct = try await TestApp.start()
        defer { Task { await direct.stop() } }
        let token = try await direct.addOwner()
        let forged = try direct.consolePost(
            "/console/sign-in", fields: ["token": token],
            headers: ["X-Forwarded-Proto": "https"])
        XCTAssertFalse(try XCTUnwrap(forged.header("Set-Cookie")).contains("Secure"))
    }

    func testIdleAndExpiredSessionsAndSignOutEndTheSession() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let idle = try await app.consoleOwner()
        let expired = try await app.consoleOwner()
        let leaving = try await app.consoleOwner()
        try await app.withConnection { connection in
            try connection.query(
                """
                UPDATE console_sessions SET last_seen_at = now() - interval '31 minutes'
                WHERE token_hash = \(OpaqueToken.hash(String(idle.dropFirst("qv_console=".count))))
                """)
            try connection.query(
                """
                UPDATE console_sessions SET expires_at = now() - interval '1 second'
                WHERE token_hash = \(OpaqueToken.hash(String(expired.dropFirst("qv_console=".count))))
                """)
        }
        XCTAssertEqual(try app.consoleGet("/console", cookie: idle).status, 303)
        XCTAssertEqual(try app.consoleGet("/console", cookie: expired).status, 303)
        XCTAssertEqual(try app.consoleGet("/console", cookie: leaving).status, 200)
        let signOut = try app.consoleSubmit("/console/sign-out", cookie: leaving, fields: [:])
        XCTAssertEqual(signOut.status, 303)
        XCTAssertTrue(try XCTUnwrap(signOut.header("Set-Cookie")).contains("Max-Age=0"))
        XCTAssertEqual(try app.consoleGet("/console", cookie: leaving).status, 303)

        // A day later, the next sign-in forgets the ended sessions; the live one stays.
        let live = try await app.consoleOwner()
        try await app.withConnection { connection in
            try connection.query(
                """
                UPDATE console_sessions
                SET last_seen_at = now() - interval '2 days', expires_at = now() - interval '1 day 1 minute'
                WHERE token_hash <> \(OpaqueToken.hash(String(live.dropFirst("qv_console=".count))))
                """)
        }
        _ = try await app.consoleOwner()
        let kept = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_sessions")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(kept, 2, "the live session and the new one")
        XCTAssertEqual(try app.consoleGet("/console", cookie: live).status, 200)
    }

    func testFailedSignInsAreThrottledPerAddress() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        var statuses: [Int] = []
        for _ in 0..<21 {
            let attempt = try app.consolePost("/console/sign-in", fields: ["token": try OpaqueToken.generate()])
            statuses.append(attempt.status)
        }
        XCTAssertEqual(Array(statuses.prefix(20)), Array(repeating: 400, count: 20))
        XCTAssertEqual(statuses.last, 429)
        // Even a good link waits now: the address is over its allowance.
        let token = try await app.addOwner()
        let throttled = try app.consolePost("/console/sign-in", fields: ["token": token])
        XCTAssertEqual(throttled.status, 429)
        XCTAssertNotNil(throttled.header("Retry-After"))
    }

    func testEachFailedAttemptForgetsSomeOfTheOldestExpiredOnes() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO console_sign_in_failures (key, created_at)
                SELECT 'address:192.0.2.' || n, now() - interval '3 hours' FROM generate_series(1, 10) AS n
                """)
            try connection.query("INSERT INTO console_sign_in_failures (key) VALUES ('address:192.0.2.99')")
        }
        for _ in 0..<2 {
            let attempt = try app.consolePost("/console/sign-in", fields: ["token": try OpaqueToken.generate()])
            XCTAssertEqual(attempt.status, 400)
        }
        let (old, recent) = try await app.withConnection { connection in
            let row = try connection.query(
                """
                SELECT count(*) FILTER (WHERE created_at < now() - interval '2 hours')::int8 AS old,
                       count(*) FILTER (WHERE created_at >= now() - interval '2 hours')::int8 AS recent
                FROM console_sign_in_failures
                """)[0]
            return (try row.decode("old", as: Int.self), try row.decode("recent", as: Int.self))
        }
        XCTAssertEqual(old, 2, "each of the two attempts forgot four of the ten")
        XCTAssertEqual(recent, 3, "what still counts is kept: the earlier failure and the two attempts")
    }

    func testSignInFormsFromAnotherPortOrSiteAreRefusedAndASignInEndsTheEarlierSession() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let victim = try await app.consoleOwner("victim@example.com")
        let attackersLink = try await app.addOwner("attacker@example.com")
        // The test client's Host is 127.0.0.1 (no port): a page on another port of it is another origin.
        for headers in [
            ["Sec-Fetch-Site": "same-site"], ["Sec-Fetch-Site": "cross-site"],
            ["Origin": "http://127.0.0.1:\(app.application.port)"], ["Origin": "null"],
        ] {
            let forged = try app.consolePost(
                "/console/sign-in", cookie: victim, fields: ["token": attackersLink], headers: headers)
            XCTAssertEqual(forged.status, 403, "\(headers): \(forged.text)")
            XCTAssertNil(forged.header("Set-Cookie"))
        }
        XCTAssertTrue(try app.consoleGet("/console", cookie: victim).text.contains("victim@example.com"))

        // The console's own form (same origin) signs in, and the session the browser had ends with it.
        let own = try app.consolePost(
            "/console/sign-in", cookie: victim, fields: ["token": attackersLink],
            headers: ["Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"])
        XCTAssertEqual(own.status, 303, own.text)
        XCTAssertEqual(try app.consoleGet("/console", cookie: victim).status, 303, "the earlier session ended")
    }

    func testTheSecondFactorLockSaysItsRealLengthAndLasts() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let secret = try TOTP.generateSecret()
        try await app.withConnection { connection in
            try connection.query(
                "INSERT INTO console_owners (email, totp_secret) VALUES ('locked@example.com', \(secret))")
        }
        let link = try await app.addOwner("locked@example.com")
        let totp = TOTP(secret: secret)
        let wrong = String(format: "%06d", (Int(totp.code(step: TOTP.step(at: Date())))! + 1) % 1_000_000)
        var statuses: [Int] = []
        var last = ""
        for _ in 0..<10 {
            let attempt = try app.consolePost(
                "/console/sign-in", fields: ["token": link, "code": wrong], headers: ["User-Agent": "Locksmith/1"])
            statuses.append(attempt.status)
            last = attempt.text
        }
        XCTAssertEqual(statuses, Array(repeating: 401, count: 9) + [429])
        XCTAssertTrue(last.contains("try again in 15 minutes"), last)
        // Asked again (the refusal now remembered), the right code is refused and the wait is still the lock's.
        let right = try app.consolePost(
            "/console/sign-in", fields: ["token": link, "code": totp.code(step: TOTP.step(at: Date()))])
        XCTAssertEqual(right.status, 429)
        XCTAssertTrue(right.text.contains("minutes"), right.text)
        XCTAssertGreaterThan(Int(right.header("Retry-After") ?? "") ?? 0, 60, "the real remaining lock")
        let audit = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT action, coalesce(client_address, '') AS address, coalesce(user_agent, '') AS agent
                FROM console_audit WHERE action LIKE 'owner.sign_in_%' ORDER BY id
                """
            ).map { [try $0.decode("action", as: String.self), try $0.decode("address"), try $0.decode("agent")] }
        }
        XCTAssertEqual(audit.filter { $0[0] == "owner.sign_in_refused" }.count, 10)
        XCTAssertEqual(audit.filter { $0[0] == "owner.sign_in_locked" }.count, 1)
        XCTAssertEqual(audit.last, ["owner.sign_in_locked", "127.0.0.1", "Locksmith/1"])
    }

    func testRefusedLinksAreAuditedWithTheClient() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        _ = try app.consolePost(
            "/console/sign-in", fields: ["token": try OpaqueToken.generate()], headers: ["User-Agent": "Guesser/2"])
        let link = try await app.addOwner("reuser@example.com")
        _ = try app.signInToConsole(token: link)
        _ = try app.consolePost("/console/sign-in", fields: ["token": link], headers: ["User-Agent": "Reuser/3"])
        let rows = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT owner_email, client_address, user_agent FROM console_audit
                WHERE action = 'owner.sign_in_refused' ORDER BY id
                """
            ).map {
                [
                    try $0.decode("owner_email", as: String.self), try $0.decode("client_address"),
                    try $0.decode("user_agent"),
                ]
            }
        }
        XCTAssertEqual(
            rows,
            [
                ["(unknown sign-in link)", "127.0.0.1", "Guesser/2"],
                ["reuser@example.com", "127.0.0.1", "Reuser/3"],
            ])
    }
}
