import Foundation
import QuoteVault
import TestSupport
import XCTest

/// `Idempotency-Key` on /v1 writes: the first answer replayed, another request refused, concurrent ones run once.
final class IdempotencyKeyTests: XCTestCase {
    private func collections(_ app: TestApp, _ user: TestUser) throws -> [[String: Any]] {
        try app.client.get("/v1/collections", headers: user.authorization).items()
    }

    func testARetryGetsTheFirstAnswerAndChangesNothing() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let headers = user.authorization.merging(["Idempotency-Key": "create-1"]) { $1 }
        let first = try app.client.send("POST", "/v1/collections", json: ["name": "Once"], headers: headers)
        XCTAssertEqual(first.status, 201)
        XCTAssertNil(first.header("Idempotent-Replayed"))
        let retry = try app.client.send("POST", "/v1/collections", json: ["name": "Once"], headers: headers)
        XCTAssertEqual(retry.status, 201)
        XCTAssertEqual(retry.header("Idempotent-Replayed"), "true")
        XCTAssertEqual(retry.body, first.body)
        XCTAssertEqual(retry.header("Content-Type"), first.header("Content-Type"))
        XCTAssertEqual(try collections(app, user).count, 1)

        // A failure is an answer too: replayed, not run again.
        let id = try first.jsonObject()["id"] as! String
        let missing = lower(UUID())
        let deleteHeaders = user.authorization.merging(["Idempotency-Key": "delete-1"]) { $1 }
        XCTAssertEqual(try app.client.send("DELETE", "/v1/collections/\(missing)", headers: deleteHeaders).status, 404)
        let replayed404 = try app.client.send("DELETE", "/v1/collections/\(missing)", headers: deleteHeaders)
        XCTAssertEqual(replayed404.status, 404)
        XCTAssertEqual(replayed404.header("Idempotent-Replayed"), "true")
        XCTAssertEqual(try replayed404.jsonObject()["code"] as? String, "not_found")
        XCTAssertEqual(try app.client.send("DELETE", "/v1/collections/\(id)", headers: user.authorization).status, 204)

        // Another user may use the same key for their own request.
        let other = try await app.makeUser()
        let theirs = try app.client.send(
            "POST", "/v1/collections", json: ["name": "Theirs"],
            headers: other.authorization.merging(["Idempotency-Key": "create-1"]) { $1 })
        XCTAssertEqual(theirs.status, 201)
        XCTAssertNil(theirs.header("Idempotent-Replayed"))
    }

    func testTheSameKeyWithAnotherRequestIs422() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let headers = user.authorization.merging(["Idempotency-Key": "k"]) { $1 }
        XCTAssertEqual(
            try app.client.send("POST", "/v1/collections", json: ["name": "A"], headers: headers).status, 201)
        for (method, path, body) in [
            ("POST", "/v1/collections", ["name": "B"]), ("PATCH", "/v1/me", ["display_name": "A"]),
            ("POST", "/v1/sync", ["operations": []]),
        ] as [(String, String, [String: Any])] {
            let reused = try app.client.send(method, path, json: body, headers: headers)
            XCTAssertEqual(reused.status, 422, path)
            XCTAssertEqual(try reused.jsonObject()["code"] as? String, "idempotency_key_reused")
        }
        XCTAssertEqual(try collections(app, user).map { $0["name"] as? String }, ["A"])
        XCTAssertNil(try app.client.get("/v1/me", headers: user.authorization).jsonObject()["display_name"] as? String)
    }

    func testKeyLengthAndCharacters() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        for (key, status) in [
            (String(repeating: "k", count: 255), 201), (String(repeating: "k", count: 256), 422), ("has space", 422),
            ("tab\tkey", 422), ("é", 422), ("~!x", 201),
        ] {
            let response = try app.client.send(
                "POST", "/v1/collections", json: ["name": "K"],
                headers: user.authorization.merging(["Idempotency-Key": key]) { $1 })
            XCTAssertEqual(response.status, status, key)
            if status == 422 { XCTAssertEqual(try response.errorFields(), ["Idempotency-Key"]) }
        }
        XCTAssertEqual(try collections(app, user).count, 2)
        // Without a valid token the key changes nothing: 401.
        XCTAssertEqual(
            try app.client.send("POST", "/v1/collections", json: ["name": "K"], headers: ["Idempotency-Key": "x"])
                .status, 401)
    }

    func testConcurrentRequestsWithOneKeyRunOnce() async throws {
        let app = try await startTestApp { $0.databasePoolSize = 8 }
        let user = try await app.makeUser()
        let port = app.application.port
        let headers = user.authorization.merging(["Idempotency-Key": "burst"]) { $1 }
        let answers = try await withThrowingTaskGroup(of: HTTPTestResponse.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try HTTPTestClient(port: port).send(
                        "POST", "/v1/collections", json: ["name": "Burst"], headers: headers)
                }
            }
            return try await group.reduce(into: [HTTPTestResponse]()) { $0.append($1) }
        }
        // Those that arrived while the first ran waited for its answer: every one is that same 201.
        XCTAssertEqual(Set(answers.map(\.status)), [201])
        XCTAssertEqual(Set(answers.map(\.body)).count, 1)
        XCTAssertEqual(answers.filter { $0.header("Idempotent-Replayed") == nil }.count, 1, "exactly one ran")
        XCTAssertEqual(try collections(app, user).count, 1)
    }

    func testAKeyExpiresAfter24HoursAndIsPruned() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let headers = user.authorization.merging(["Idempotency-Key": "daily"]) { $1 }
        XCTAssertEqual(
            try app.client.send("POST", "/v1/collections", json: ["name": "Day 1"], headers: headers).status, 201)
        try await app.withConnection {
            try $0.query(
                """
                UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second' \
                WHERE user_id = \(user.id)
                """
            )
        }
        let nextDay = try app.client.send("POST", "/v1/collections", json: ["name": "Day 2"], headers: headers)
        XCTAssertEqual(nextDay.status, 201, "an expired key is a new key")
        XCTAssertNil(nextDay.header("Idempotent-Replayed"))
        try await app.withConnection {
            try $0.query(
                "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE user_id = \(user.id)")
        }
        let pruned = try await app.application.context.sync.maintenance.pruneOnce()
        XCTAssertEqual(pruned, 1)
        let left = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM idempotency_keys")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(left, 0)
    }

    func testAUserHoldsAtMostTenThousandLiveKeys() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        try await app.withConnection {
            try $0.query(
                """
                INSERT INTO idempotency_keys (user_id, key, fingerprint, status, content_type, body)
                SELECT \(user.id), 'old-' || n, '\\x00'::bytea, 204, NULL, ''::bytea FROM generate_series(1, 9999) n
                """)
        }
        func send(_ key: String) throws -> HTTPTestResponse {
            try app.client.send(
                "POST", "/v1/collections", json: ["name": key],
                headers: user.authorization.merging(["Idempotency-Key": key]) { $1 })
        }
        XCTAssertEqual(try send("number-10000").status, 201, "the 10,000th live key")
        let refused = try send("number-10001")
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(try refused.jsonObject()["code"] as? String, "rate_limited")
        XCTAssertNotNil(refused.header("Retry-After"))
        XCTAssertEqual(
            try send("number-10000").header("Idempotent-Replayed"), "true", "a key already held still replays")
        XCTAssertEqual(
            try app.client.send("POST", "/v1/collections", json: ["name": "No key"], headers: user.authorization)
                .status, 201,
            "writes without a key are not limited")
        // Another user is not affected; and once keys expire, new ones are taken again.
        let other = try await app.makeUser()
        XCTAssertEqual(
            try app.client.send(
                "POST", "/v1/collections", json: ["name": "x"],
                headers: other.authorization.merging(["Idempotency-Key": "number-10001"]) { $1 }
            ).status, 201)
        try await app.withConnection {
            try $0.query(
                """
                UPDATE idempotency_keys SET created_at = now() - interval '25 hours' \
                WHERE user_id = \(user.id) AND key LIKE 'old-%'
                """
            )
        }
        XCTAssertEqual(try send("number-10001").status, 201)
        XCTAssertEqual(try collections(app, user).count, 3)
    }

    func testAUsersLiveKeysHoldAtMost16MiBOfAnswers() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        // One stored answer a byte short of the quota: room for one more key, whose answer passes it.
        let stored = IdempotencyStore.maximumAnswerBytesPerUser - 1
        try await app.withConnection {
            try $0.query(
                """
                INSERT INTO idempotency_keys (user_id, key, fingerprint, status, content_type, body)
                VALUES (\(user.id), 'big', '\\x00'::bytea, 200, 'application/json',
                        \([UInt8](repeating: 32, count: stored)))
                """)
        }
        func send(_ key: String) throws -> HTTPTestResponse {
            try app.client.send(
                "POST", "/v1/collections", json: ["name": key],
                headers: user.authorization.merging(["Idempotency-Key": key]) { $1 })
        }
        XCTAssertEqual(try send("within").status, 201, "under the quota a new key is taken")
        let refused = try send("past")
        XCTAssertEqual(refused.status, 429, refused.text)
        XCTAssertEqual(try refused.jsonObject()["code"] as? String, "rate_limited")
        XCTAssertNotNil(refused.header("Retry-After"))
        XCTAssertEqual(try send("within").header("Idempotent-Replayed"), "true", "a key already held still replays")
        XCTAssertEqual(try collections(app, user).count, 1, "the refused request wrote nothing")
        // Once the big answer expires, new keys are taken again.
        try await app.withConnection {
            try $0.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'big'")
        }
        XCTAssertEqual(try send("past").status, 201)
    }

    func testEveryV1WriteIsCoveredAndSignInRoutesIgnoreTheKey() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quote = lower(try await app.insertQuotes(["Covered"])[0])
        let key = user.authorization.merging(["Idempotency-Key": "fav"]) { $1 }
        XCTAssertEqual(try app.client.send("PUT", "/v1/favorites/\(quote)", headers: key).status, 201)
        let replay = try app.client.send("PUT", "/v1/favorites/\(quote)", headers: key)
        XCTAssertEqual(replay.status, 201, "the first answer, not the 200 a second PUT would give")
        XCTAssertEqual(replay.header("Idempotent-Replayed"), "true")
        let signup: [String: Any] = [
            "email": "key-\(UUID().uuidString.prefix(6))@example.com", "password": "long enough pw",
        ]
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/signup", json: signup, headers: ["Idempotency-Key": "s"]).status, 201)
        XCTAssertEqual(
            try app.client.send("POST", "/v1/auth/signup", json: signup, headers: ["Idempotency-Key": "s"]).status, 409,
            "sign-in routes carry no user: the key is ignored")
        let stored = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM idempotency_keys")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(stored, 1)

        // The document names the header on exactly the writes that take it.
        let paths = try XCTUnwrap(try app.client.get("/openapi.json").jsonObject()["paths"] as? [String: [String: Any]])
        for route in app.application.server.router.routes where route.pattern.hasPrefix("/v1/") {
            let operation = paths[route.pattern]?[route.method.rawValue.lowercased()] as? [String: Any]
            let documented = (operation?["parameters"] as? [[String: Any]] ?? []).contains {
                $0["$ref"] as? String == "#/components/parameters/IdempotencyKey"
            }
            let write = ["POST", "PUT", "PATCH", "DELETE"].contains(route.method.rawValue)
            let takesKey = write && (!route.pattern.hasPrefix("/v1/auth/") || route.pattern == "/v1/auth/logout")
            XCTAssertEqual(documented, takesKey, "\(route.method) \(route.pattern)")
        }
    }
}
