import AuthJWT
import Foundation
import PGClient
import QuoteAPI
import QuoteVault
import Synchronization
import TestSupport
import XCTest

/// Issue 16 on the real application: throttles that cannot be raced, cheap refusals before password hashing,
/// the hashing queue's fair share, reset tokens invalidated by a password change, the refresh reuse window,
/// bodies refused from their headers, `/metrics` access, the statement timeout.
final class HostileTrafficTests: XCTestCase {
    private func signUp(_ app: TestApp, _ email: String, _ password: String = "correct horse") throws -> [String: Any] {
        let response = try app.client.send("POST", "/v1/auth/signup", json: ["email": email, "password": password])
        XCTAssertEqual(response.status, 201, response.text)
        return try response.jsonObject()
    }

    /// Sends a JSON body from another loopback address.
    private func post(_ app: TestApp, _ path: String, _ json: [String: Any], from source: String) throws
        -> HTTPTestResponse
    {
        let connection = try HTTPTestConnection(port: app.application.port, source: source)
        defer { connection.close() }
        return try connection.send(
            "POST", path, headers: ["Content-Type": "application/json"],
            body: Array(try JSONSerialization.data(withJSONObject: json)))
    }

    private func count(_ app: TestApp, _ sql: PGQuery) async throws -> Int {
        try await app.withConnection { try $0.query(sql)[0].decode(at: 0, as: Int.self) }
    }

    // MARK: throttles

    func testThirtyConcurrentWrongPasswordsAreEvaluatedExactlyUpToTheLimit() async throws {
        let app = try await startTestApp()
        _ = try signUp(app, "raced@x.io")
        let port = app.application.port
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<30 {
                group.addTask {
                    try HTTPTestClient(port: port).send(
                        "POST", "/v1/auth/login", json: ["email": "raced@x.io", "password": "wrong guess"]
                    ).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(
            statuses.filter { $0 == 401 }.count, 10, "exactly the limit of 10 evaluated: \(statuses.sorted())")
        XCTAssertEqual(statuses.filter { $0 == 429 }.count, 20)
        let failures = try await count(app, "SELECT count(*)::int8 FROM auth_events WHERE kind = 'login_failed'")
        XCTAssertEqual(failures, 10)
    }

    func testASuccessfulLoginDoesNotCountAgainstTheLimit() async throws {
        let app = try await startTestApp()
        _ = try signUp(app, "careful@x.io")
        func login(_ password: String) throws -> Int {
            try app.client.send("POST", "/v1/auth/login", json: ["email": "careful@x.io", "password": password]).status
        }
        for _ in 0..<9 { XCTAssertEqual(try login("wrong guess"), 401) }
        XCTAssertEqual(try login("correct horse"), 200)
        XCTAssertEqual(try login("wrong guess"), 401, "the tenth failure is still evaluated")
        XCTAssertEqual(try login("correct horse"), 429, "past ten failures, even the right password waits")
    }

    func testSignUpsAreThrottledPerAddress() async throws {
        let app = try await startTestApp()
        for index in 0..<30 {
            XCTAssertEqual(
                try app.client.send(
                    "POST", "/v1/auth/signup", json: ["email": "u\(index)@x.io", "password": "password!"]
                ).status, 201)
        }
        let throttled = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": "u30@x.io", "password": "password!"])
        XCTAssertEqual(throttled.status, 429)
        XCTAssertNotNil(throttled.header("Retry-After"))
        XCTAssertEqual(
            try post(app, "/v1/auth/signup", ["email": "elsewhere@x.io", "password": "password!"], from: "127.0.0.2")
                .status, 201,
            "another address has its own allowance")
        let users = try await count(app, "SELECT count(*)::int8 FROM users")
        XCTAssertEqual(users, 31, "the throttled sign-up created nothing")
    }

    func testResetConfirmationsAreThrottledPerAddress() async throws {
        let app = try await startTestApp()
        for _ in 0..<20 {
            let response = try app.client.send(
                "POST", "/v1/auth/password-reset/confirm",
                json: ["token": try OpaqueToken.generate(), "password": "new password"])
            XCTAssertEqual(response.status, 400)
        }
        // Past the limit: refused after HTTP_REFUSAL_DELAY (1 s by default), still saying when to retry.
        let before = ContinuousClock.now
        let throttled = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm",
            json: ["token": try OpaqueToken.generate(), "password": "new password"])
        XCTAssertEqual(throttled.status, 429)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - before, .seconds(1), "the refusal waits the delay")
        XCTAssertGreaterThan(Int(throttled.header("Retry-After") ?? "") ?? 0, 0)
        // A malformed token from an address past its limit is refused the same way (a flood stays refused).
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/password-reset/confirm", json: ["token": "made up", "password": "new password"]
            ).status, 429)
        XCTAssertEqual(
            try post(
                app, "/v1/auth/password-reset/confirm",
                ["token": try OpaqueToken.generate(), "password": "new password"],
                from: "127.0.0.2"
            ).status, 400)
    }

    func testAFloodPastALimitIsAnsweredFromMemoryWithoutTheDatabase() async throws {
        let app = try await startTestApp()
        for _ in 0..<20 {
            _ = try app.client.send(
                "POST", "/v1/auth/password-reset/confirm",
                json: ["token": try OpaqueToken.generate(), "password": "new password"])
        }
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/password-reset/confirm",
                json: ["token": try OpaqueToken.generate(), "password": "new password"]
            ).status, 429)
        // The database forgets (as if the window had passed), the instance still remembers its refusal for a while.
        try await app.withConnection { try $0.query("DELETE FROM auth_events") }
        let remembered = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm",
            json: ["token": try OpaqueToken.generate(), "password": "new password"])
        XCTAssertEqual(remembered.status, 429)
        XCTAssertGreaterThan(Int(remembered.header("Retry-After") ?? "") ?? 0, 0)
        let attempts = try await count(app, "SELECT count(*)::int8 FROM auth_events")
        XCTAssertEqual(attempts, 0, "a remembered refusal costs no database work")
    }

    func testUnknownResetTokensAreRefusedWithoutHashing() async throws {
        // No room at all in the hashing queue: anything that hashes would be 503.
        let app = try await startTestApp { $0.hashingQueueLimit = 0 }
        let response = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm",
            json: ["token": try OpaqueToken.generate(), "password": "new password"])
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(try response.jsonObject()["code"] as? String, "reset_token_invalid")
    }

    func testAPasswordResetInvalidatesEveryOtherResetTokenOfTheUser() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let app = try await startTestApp { $0.smtpURL = sink.url }
        _ = try signUp(app, "twice@x.io")
        for _ in 0..<2 {
            XCTAssertEqual(
                try app.client.send("POST", "/v1/auth/password-reset", json: ["email": "twice@x.io"]).status, 202)
        }
        let tokens = try await sink.waitForMessages(2).compactMap(SMTPSink.token(in:))
        XCTAssertEqual(tokens.count, 2)
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/password-reset/confirm", json: ["token": tokens[1], "password": "first reset"]
            ).status, 200)
        let stale = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm", json: ["token": tokens[0], "password": "undo the reset"])
        XCTAssertEqual(stale.status, 400, "the older mail cannot change the password again")
        XCTAssertEqual(try stale.jsonObject()["code"] as? String, "reset_token_invalid")
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/login", json: ["email": "twice@x.io", "password": "first reset"])
                .status, 200)
    }

    // MARK: the hashing queue

    func testOneAddressCannotTakeTheWholeHashingQueueAndOthersGetTheirTurn() async throws {
        // A slow hash (16 lanes of 16 MiB, ten times the default's work) keeps the single thread busy while
        // the queue fills: the steps below wait for the queue's state, not for a fixed time.
        let queue = PasswordHashingQueue(
            hasher: PasswordHasher(parameters: ScryptParameters(logN: 14, r: 8, p: 16)), threads: 1, queueLimit: 8,
            perAddressLimit: 3)
        defer { queue.stop() }
        let order = OrderLog()
        let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
            func hash(from address: String, _ password: String) {
                group.addTask {
                    await RequestOrigin.$clientAddress.withValue(address) {
                        let client = address == "10.0.0.1" ? "a" : "b"
                        let served = (try? await queue.hash(password)) != nil
                        if served { order.append(client) }
                        return (client, served)
                    }
                }
            }
            for index in 0..<3 { hash(from: "10.0.0.1", "password \(index)") }
            // One job running, two waiting: the address holds its whole share. Seen three times in a row, so a
            // moment before the thread took the first job does not pass for it.
            var seen = 0
            for _ in 0..<1_000 where seen < 3 {
                seen = queue.queueDepth == 2 ? seen + 1 : 0
                try? await Task.sleep(for: .milliseconds(10))
            }
            for index in 3..<5 { hash(from: "10.0.0.1", "password \(index)") }
            hash(from: "10.0.0.2", "other")
            return await group.reduce(into: [(String, Bool)]()) { $0.append($1) }
        }
        XCTAssertEqual(outcomes.filter { $0.0 == "a" && $0.1 }.count, 3, "one address holds at most its share")
        XCTAssertEqual(outcomes.filter { $0.0 == "a" && !$0.1 }.count, 2)
        XCTAssertEqual(outcomes.filter { $0.0 == "b" && $0.1 }.count, 1, "another address still gets in")
        // The first job was running and the second waiting when the other address came: it is served right after
        // that one, before the flood's third (first come, first served would have put it last).
        XCTAssertEqual(order.all, ["a", "a", "b", "a"], "served in turns, not behind the whole flood")
    }

    private final class OrderLog: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    // MARK: refresh reuse window

    func testParallelRefreshesWithinTheReuseWindowKeepTheSession() async throws {
        let app = try await startTestApp()
        let session = try signUp(app, "parallel@x.io")
        let token = session["refresh_token"] as! String
        let port = app.application.port
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try HTTPTestClient(port: port).send("POST", "/v1/auth/refresh", json: ["refresh_token": token])
                        .status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses, [200, 200], "both parallel refreshes succeed")
        let revoked = try await count(app, "SELECT count(*)::int8 FROM sessions WHERE revoked_at IS NOT NULL")
        XCTAssertEqual(revoked, 0)
        // Past the window, the same token again is theft: the session is revoked.
        try await app.withConnection {
            try $0.query(
                "UPDATE refresh_tokens SET rotated_at = rotated_at - interval '11 seconds' WHERE rotated_at IS NOT NULL"
            )
        }
        let late = try app.client.send("POST", "/v1/auth/refresh", json: ["refresh_token": token])
        XCTAssertEqual(late.status, 401)
        XCTAssertEqual(try late.jsonObject()["code"] as? String, "refresh_token_reused")
    }

    // MARK: bodies refused from their headers

    func testAuthenticatedRoutesRefuseABodyBeforeReadingIt() async throws {
        let app = try await startTestApp()
        let cases: [(head: String, status: Int)] = [
            (
                "POST /v1/collections HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 500000\r\n\r\n",
                401
            ),
            (
                "PUT /v1/me/avatar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not.a.token\r\n"
                    + "Content-Type: image/png\r\nContent-Length: 2000000\r\n\r\n",
                401
            ),
            (
                "PUT /v1/me/avatar HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 3000000\r\n\r\n",
                413
            ),
            // Supabase Storage answers a missing key with 400 and statusCode "401" in its body.
            (
                "POST /storage/v1/object/avatars/x/y.png HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\n"
                    + "Content-Length: 1000000\r\n\r\n",
                400
            ),
            (
                "POST /rest/v1/collections HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100000\r\n\r\n",
                401
            ),
            ("POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", 404),
            // Credentials are small: 8 KiB at most on the auth routes of both APIs.
            (
                "POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 8193\r\n\r\n",
                413
            ),
            (
                "POST /auth/v1/token?grant_type=password HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 8193\r\n\r\n",
                413
            ),
        ]
        for (head, status) in cases {
            let connection = try HTTPTestConnection(port: app.application.port, timeoutSeconds: 5)
            connection.write(Array(head.utf8))
            let response = try connection.readResponse()
            XCTAssertEqual(response.status, status, head)
            connection.close()
        }
        let prefix = "{\"email\": \"a@b.c\", \"password\": \""
        let atLimit = prefix + String(repeating: "p", count: 8192 - prefix.utf8.count - 2) + "\"}"
        XCTAssertEqual(atLimit.utf8.count, 8192)
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/auth/login", headers: ["Content-Type": "application/json"], body: Array(atLimit.utf8)
            ).status, 401,
            "8 KiB exactly is read (and the password is wrong)")
        let user = try await app.makeUser()
        let created = try app.client.send(
            "POST", "/v1/collections", json: ["name": "kept"], headers: user.authorization)
        XCTAssertEqual(created.status, 201, "a valid token's body is read")
    }

    // MARK: operations

    func testMetricsAnswerOnlyTheHolderOfTheTokenWhenOneIsSet() async throws {
        let app = try await TestApp.start { $0.metricsToken = "scrape-me-0123456789" }
        XCTAssertEqual(try app.client.get("/metrics").status, 404)
        XCTAssertEqual(try app.client.get("/metrics", headers: ["Authorization": "Bearer wrong"]).status, 404)
        let scraped = try app.client.get("/metrics", headers: ["Authorization": "Bearer scrape-me-0123456789"])
        XCTAssertEqual(scraped.status, 200)
        XCTAssertTrue(scraped.text.contains("http_requests_total") || scraped.text.contains("# TYPE"))
        XCTAssertEqual(scraped.header("X-Content-Type-Options"), "nosniff")
        await app.stop()
        let open = try await startTestApp()
        XCTAssertEqual(try open.client.get("/metrics").status, 200, "without a token: loopback clients only, as here")
    }

    func testAStatementPastTheTimeoutIsA503ProblemAndTheServerCarriesOn() async throws {
        let app = try await startTestApp { $0.statementTimeoutMilliseconds = 200 }
        do {
            _ = try await app.pool.read("SELECT pg_sleep(1) IS NULL AS slept")
            XCTFail("the statement should have been cancelled")
        } catch let error as PGError {
            XCTAssertEqual(error.sqlState, .queryCanceled)
            XCTAssertEqual(Failure(classifying: error), .databaseUnavailable(.statementTimeout))
            XCTAssertEqual(Failure(classifying: error).code, "service_unavailable")
            XCTAssertEqual(Failure(classifying: error).retryAfterSeconds, 1)
        }
        XCTAssertEqual(try app.client.get("/v1/quotes").status, 200, "the pool's connections keep working")
    }
}
