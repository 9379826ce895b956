import Foundation
import TestSupport
import XCTest

/// `POST /v1/sync`: queued operations applied in order, each at most once, each answered as its route would.
final class SyncBatchTests: XCTestCase {
    private func results(_ response: HTTPTestResponse, file: StaticString = #filePath, line: UInt = #line) throws
        -> [[String: Any]]
    {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        let body = try response.jsonObject()
        XCTAssertNotNil(body["next"] as? String, file: file, line: line)
        return body["results"] as? [[String: Any]] ?? []
    }

    func testOperationsAnswerAsTheirRoutesAndACollectionCreatedOfflineCanBeNamed() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser(), other = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two"])
        let theirs =
            try app.client.send("POST", "/v1/collections", json: ["name": "Theirs"], headers: other.authorization)
            .jsonObject()["id"] as! String
        let collection = lower(UUID())
        let operations: [[String: Any]] = [
            ["id": lower(UUID()), "op": "favorite.add", "quote_id": lower(quotes[0])],
            ["id": lower(UUID()), "op": "favorite.add", "quote_id": lower(quotes[0])],
            ["id": lower(UUID()), "op": "favorite.add", "quote_id": lower(UUID())],
            ["id": lower(UUID()), "op": "collection.create", "collection_id": collection, "name": "  Offline  "],
            [
                "id": lower(UUID()), "op": "collection.add_quote", "collection_id": collection,
                "quote_id": lower(quotes[1]),
            ],
            [
                "id": lower(UUID()), "op": "collection.add_quote", "collection_id": collection,
                "quote_id": lower(UUID()),
            ],
            ["id": lower(UUID()), "op": "collection.rename", "collection_id": theirs, "name": "Mine now"],
            ["id": lower(UUID()), "op": "collection.add_quote", "collection_id": theirs, "quote_id": lower(quotes[0])],
            ["id": lower(UUID()), "op": "collection.delete", "collection_id": theirs],
            ["id": lower(UUID()), "op": "collection.create", "collection_id": theirs, "name": "Taken"],
            ["id": lower(UUID()), "op": "collection.rename", "collection_id": collection, "name": ""],
            ["id": lower(UUID()), "op": "collection.create", "collection_id": lower(UUID())],
            [
                "id": lower(UUID()), "op": "profile.update", "display_name": "Grace",
                "preferences": ["accent_color": "green"],
            ],
            ["id": lower(UUID()), "op": "profile.update", "preferences": ["font_size": "huge"]],
            ["id": lower(UUID()), "op": "favorite.remove", "quote_id": lower(quotes[0])],
            [
                "id": lower(UUID()), "op": "collection.remove_quote", "collection_id": collection,
                "quote_id": lower(quotes[1]),
            ],
        ]
        let answered = try results(try app.client.push(user, operations))
        XCTAssertEqual(
            answered.map { $0["id"] as? String }, operations.map { $0["id"] as? String },
            "one result per operation, in order")
        XCTAssertEqual(
            answered.map { $0["status"] as? Int },
            [201, 200, 404, 201, 201, 404, 404, 404, 404, 409, 422, 422, 200, 422, 204, 204])
        XCTAssertEqual(
            answered.map { $0["code"] as? String },
            [
                nil, nil, "not_found", nil, nil, "not_found", "not_found", "not_found",
                "not_found", "conflict", "validation_failed", "validation_failed", nil,
                "validation_failed", nil, nil,
            ])
        XCTAssertEqual((answered[0]["object"] as? [String: Any])?["quote_id"] as? String, lower(quotes[0]))
        let created = try XCTUnwrap(answered[3]["object"] as? [String: Any])
        XCTAssertEqual(created["id"] as? String, collection)
        XCTAssertEqual(created["name"] as? String, "Offline")
        XCTAssertEqual((answered[12]["object"] as? [String: Any])?["display_name"] as? String, "Grace")
        XCTAssertNil(answered[14]["object"])

        // A later batch names the offline collection too; the other user's collection is untouched.
        let later = try results(
            try app.client.push(
                user,
                [
                    ["id": lower(UUID()), "op": "collection.rename", "collection_id": collection, "name": "Renamed"]
                ]))
        XCTAssertEqual(later.first?["status"] as? Int, 200)
        XCTAssertEqual(
            try app.client.get("/v1/collections", headers: other.authorization).items().map { $0["name"] as? String },
            ["Theirs"])
        let me = try app.client.get("/v1/me", headers: user.authorization).jsonObject()
        XCTAssertEqual((me["preferences"] as? [String: Any])?["accent_color"] as? String, "green")
        XCTAssertEqual(
            (me["preferences"] as? [String: Any])?["font_size"] as? String, "medium",
            "the failed update changed nothing")
    }

    func testARepeatedOperationIdReturnsItsFirstResultAndAppliesNothingAgain() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let collection = lower(UUID())
        let create: [String: Any] = [
            "id": lower(UUID()), "op": "collection.create", "collection_id": collection, "name": "First",
        ]
        let rename: [String: Any] = [
            "id": lower(UUID()), "op": "collection.rename", "collection_id": collection, "name": "Second",
        ]
        let first = try results(try app.client.push(user, [create, rename]))
        XCTAssertEqual(first.map { $0["status"] as? Int }, [201, 200])
        _ = try results(
            try app.client.push(
                user, [["id": lower(UUID()), "op": "collection.rename", "collection_id": collection, "name": "Third"]]))
        // The first batch again (its answer was lost): the same results, and "Third" stays.
        let again = try results(try app.client.push(user, [create, rename, create]))
        XCTAssertEqual(again.map { $0["status"] as? Int }, [201, 200, 201])
        XCTAssertEqual(
            (again[0]["object"] as? [String: Any])?["name"] as? String, "First", "the first result, as it was")
        XCTAssertEqual((again[1]["object"] as? [String: Any])?["name"] as? String, "Second")
        XCTAssertEqual(
            try app.client.get("/v1/collections", headers: user.authorization).items().map { $0["name"] as? String },
            ["Third"])
        // Another user's operation with the same id is theirs alone.
        let other = try await app.makeUser()
        XCTAssertEqual(try results(try app.client.push(other, [rename])).first?["status"] as? Int, 404)
    }

    func testBatchOfFiveHundredIsAppliedAndFiveHundredAndOneIsRefusedWhole() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes((0..<250).map { "Batch \($0)" })
        var operations = quotes.map {
            ["id": lower(UUID()), "op": "favorite.add", "quote_id": lower($0)] as [String: Any]
        }
        operations += quotes.map {
            ["id": lower(UUID()), "op": "favorite.remove", "quote_id": lower($0)] as [String: Any]
        }
        XCTAssertEqual(operations.count, 500)
        let tooMany = try app.client.push(
            user, operations + [["id": lower(UUID()), "op": "favorite.add", "quote_id": lower(quotes[0])]])
        XCTAssertEqual(tooMany.status, 422)
        XCTAssertEqual(try tooMany.errorFields(), ["operations"])
        XCTAssertEqual(
            try app.client.get("/v1/favorites", headers: user.authorization).jsonObject()["total"] as? Int, 0,
            "nothing applied")
        let answered = try results(try app.client.push(user, Array(operations.prefix(499)) + [operations[0]]))
        XCTAssertEqual(answered.count, 500)
        XCTAssertEqual(Set(answered.prefix(250).map { $0["status"] as? Int }), [201])
        XCTAssertEqual(Set(answered[250..<499].map { $0["status"] as? Int }), [204])
        XCTAssertEqual(answered[499]["status"] as? Int, 201, "the repeated first operation: its first result")
        XCTAssertEqual(
            try app.client.get("/v1/favorites/ids", headers: user.authorization).jsonObject()["ids"] as? [String],
            [lower(quotes[249])])
    }

    func testAMalformedBatchIs422AndAppliesNothing() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quote = lower(try await app.insertQuotes(["Kept out"])[0])
        let good: [String: Any] = ["id": lower(UUID()), "op": "favorite.add", "quote_id": quote]
        let cases: [([String: Any], String)] = [
            (["id": "not-a-uuid", "op": "favorite.add", "quote_id": quote], "operations[1].id"),
            (["op": "favorite.add", "quote_id": quote], "operations[1].id"),
            (["id": lower(UUID()), "op": "favorite.toggle", "quote_id": quote], "operations[1].op"),
            (["id": lower(UUID()), "op": "favorite.add"], "operations[1].quote_id"),
            (
                ["id": lower(UUID()), "op": "collection.add_quote", "collection_id": 7, "quote_id": quote],
                "operations[1].collection_id"
            ),
        ]
        for (bad, field) in cases {
            let response = try app.client.push(user, [good, bad])
            XCTAssertEqual(response.status, 422, "\(bad)")
            XCTAssertEqual(try response.errorFields(), [field])
        }
        for body in [[:], ["operations": "x"], ["operations": [1]]] as [[String: Any]] {
            XCTAssertEqual(
                try app.client.send("POST", "/v1/sync", json: body, headers: user.authorization).status, 422, "\(body)")
        }
        let notJSON = try app.client.send(
            "POST", "/v1/sync", headers: user.authorization.merging(["Content-Type": "application/json"]) { $1 },
            body: Array("{".utf8))
        XCTAssertEqual(notJSON.status, 400)
        XCTAssertEqual(
            try app.client.get("/v1/favorites", headers: user.authorization).jsonObject()["total"] as? Int, 0)
        // The good operation was not remembered either: sent alone it applies now.
        XCTAssertEqual(try results(try app.client.push(user, [good])).first?["status"] as? Int, 201)
        XCTAssertEqual(try app.client.push(user, []).status, 200, "an empty batch is fine")
        XCTAssertEqual(try app.client.send("POST", "/v1/sync", json: ["operations": []]).status, 401)
    }

    func testPostCollectionsAcceptsAClientId() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser(), other = try await app.makeUser()
        let id = lower(UUID())
        let created = try app.client.send(
            "POST", "/v1/collections", json: ["name": "Mine", "id": id], headers: user.authorization)
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(try created.jsonObject()["id"] as? String, id)
        for who in [user, other] {
            let taken = try app.client.send(
                "POST", "/v1/collections", json: ["name": "Again", "id": id], headers: who.authorization)
            XCTAssertEqual(taken.status, 409)
            XCTAssertEqual(try taken.jsonObject()["code"] as? String, "conflict")
        }
        let malformed = try app.client.send(
            "POST", "/v1/collections", json: ["name": "Bad", "id": "nope"], headers: user.authorization)
        XCTAssertEqual(malformed.status, 422)
        XCTAssertEqual(try malformed.errorFields(), ["id"])
        XCTAssertEqual(try app.client.get("/v1/collections", headers: user.authorization).items().count, 1)
        XCTAssertEqual(try app.client.get("/v1/collections", headers: other.authorization).items().count, 0)
    }

    /// Two server instances on one database, a batch and an idempotent POST retried at once through both:
    /// each operation runs once, every answer is the first one.
    func testTwoInstancesRetryingAtOnceApplyEachOperationOnce() async throws {
        let first = try await startTestApp { $0.databasePoolSize = 6 }
        let second = try await startTestApp(databaseURL: first.databaseURL) { $0.databasePoolSize = 6 }
        let user = try await first.makeUser()
        let collection = lower(UUID())
        let batch: [[String: Any]] = [
            ["id": lower(UUID()), "op": "collection.create", "collection_id": collection, "name": "Once"],
            ["id": lower(UUID()), "op": "collection.rename", "collection_id": collection, "name": "Renamed once"],
        ]
        let body = Array(try JSONSerialization.data(withJSONObject: ["operations": batch]))
        let ports = [first.application.port, second.application.port]
        let answers = try await withThrowingTaskGroup(of: [Int].self) { group in
            for index in 0..<8 {
                group.addTask {
                    let client = HTTPTestClient(port: ports[index % 2])
                    if index % 4 == 3 {
                        // An idempotent POST /v1/collections through either instance, same key.
                        let response = try client.send(
                            "POST", "/v1/collections", json: ["name": "Keyed"],
                            headers: user.authorization.merging(["Idempotency-Key": "both"]) { $1 })
                        return [response.status]
                    }
                    let answer = try client.send(
                        "POST", "/v1/sync",
                        headers: user.authorization.merging(["Content-Type": "application/json"]) { $1 },
                        body: body
                    ).jsonObject()
                    return (answer["results"] as? [[String: Any]] ?? []).map { $0["status"] as? Int ?? -1 }
                }
            }
            return try await group.reduce(into: [[Int]]()) { $0.append($1) }
        }
        XCTAssertEqual(answers.filter { $0.count == 2 }.count, 6)
        for statuses in answers where statuses.count == 2 { XCTAssertEqual(statuses, [201, 200]) }
        for statuses in answers where statuses.count == 1 { XCTAssertEqual(statuses, [201]) }
        let names = try first.client.get("/v1/collections", headers: user.authorization).items().compactMap {
            $0["name"] as? String
        }
        XCTAssertEqual(names.sorted(), ["Keyed", "Renamed once"])
    }
}
