import Foundation
import TestSupport
import XCTest

/// Every field of a join's config is honoured or refused in the `phx_reply`, never accepted and ignored:
/// `select` narrows a change to its columns (and the primary key), `replication_ready` is answered, `replay` and
/// ill-typed fields are refused with their reason.
final class RealtimeJoinConfigTests: XCTestCase {
    private func collections(_ extra: [String: Any] = [:]) -> [String: Any] {
        ["event": "INSERT", "schema": "public", "table": "collections"].merging(extra) { $1 }
    }

    func testSelectNarrowsTheChangeToItsColumnsAndThePrimaryKey() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let socket = try app.realtime()
        let reply = socket.join(
            "realtime:mine", changes: [collections(["select": ["name"]]), collections()], token: user.accessToken)
        XCTAssertEqual(status(reply), "ok", "\(String(describing: reply))")
        let listed = try XCTUnwrap((reply?["response"] as? [String: Any])?["postgres_changes"] as? [[String: Any]])
        let (narrowID, wholeID) = (try XCTUnwrap(listed[0]["id"] as? Int), try XCTUnwrap(listed[1]["id"] as? Int))
        XCTAssertEqual(
            try app.client.send("POST", "/v1/collections", json: ["name": "Faves"], headers: user.authorization).status,
            201)
        // One message per distinct select, each with the ids of the subscriptions that share it.
        var byIDs: [[Int]: [String: Any]] = [:]
        for _ in 0..<2 {
            let payload = try XCTUnwrap(socket.next("postgres_changes")?["payload"] as? [String: Any])
            byIDs[try XCTUnwrap(payload["ids"] as? [Int])] = payload["data"] as? [String: Any]
        }
        let narrow = try XCTUnwrap(byIDs[[narrowID]])
        XCTAssertEqual(Set((narrow["record"] as? [String: Any])?.keys.map { $0 } ?? []), ["id", "name"])
        XCTAssertEqual((narrow["record"] as? [String: Any])?["name"] as? String, "Faves")
        XCTAssertEqual((narrow["columns"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, ["id", "name"])
        let whole = try XCTUnwrap(byIDs[[wholeID]])
        XCTAssertTrue((whole["record"] as? [String: Any])?.keys.contains("user_id") == true, "no select: every column")
    }

    func testFieldsThatCannotBeHonouredAreRefusedWithTheirReason() async throws {
        let app = try await startTestApp()
        let socket = try app.realtime()
        let refusals: [(String, [[String: Any]], [String: Any], String)] = [
            ("a select that is text", [collections(["select": "name"])], [:], "expected a list of column name"),
            (
                "a select of an unknown column", [collections(["select": ["name", "nope"]])], [:],
                "invalid column for select nope"
            ),
            ("a select of something else", [collections(["select": ["name", 3]])], [:], "expected a list of column"),
            ("replay", [], ["replay": ["since": 0]], "Replay is not allowed for public channels"),
            ("self as text", [], ["self": "yes"], "config.broadcast.self must be true or false"),
            ("replication_ready as a number", [], ["replication_ready": 1], "replication_ready must be true or false"),
        ]
        for (what, changes, broadcast, expected) in refusals {
            let reply = socket.join("realtime:refused", changes: changes, broadcast: broadcast)
            XCTAssertEqual(status(reply), "error", what)
            XCTAssertTrue(reason(reply)?.contains(expected) == true, "\(what): \(String(describing: reason(reply)))")
        }
        let presence = socket.join("realtime:refused", presence: ["key": 7])
        XCTAssertEqual(reason(presence), "config.presence.key must be a string")
        // Nothing of the refused joins remains: a broadcast on the topic reaches no one, no error.
        XCTAssertEqual(status(socket.join("realtime:other")), "ok")
    }

    func testReplicationReadyIsAnsweredAndEventsAreCaseInsensitive() async throws {
        let app = try await startTestApp()
        try await app.untilRealtimeListens()
        let socket = try app.realtime()
        let reply = socket.join(
            "realtime:quotes", changes: [["event": "insert", "schema": "public", "table": "quotes"]],
            broadcast: ["replication_ready": true])
        XCTAssertEqual(status(reply), "ok")
        let listed = (reply?["response"] as? [String: Any])?["postgres_changes"] as? [[String: Any]]
        XCTAssertEqual(listed?.first?["event"] as? String, "INSERT")
        var messages: [String: String] = [:]
        for _ in 0..<2 {
            let system = try XCTUnwrap(socket.next("system")?["payload"] as? [String: Any])
            XCTAssertEqual(system["status"] as? String, "ok")
            messages[system["extension"] as? String ?? ""] = system["message"] as? String
        }
        XCTAssertEqual(messages["system"], "Replication connection established")
        XCTAssertEqual(messages["postgres_changes"], "Subscribed to PostgreSQL")
    }
}
