import Foundation
import TestSupport
import XCTest

/// Two instances on one database: a change written through one reaches a Realtime socket on the other, and so
/// does a broadcast (through `NOTIFY`), within its size limit.
final class RealtimeInstancesTests: XCTestCase {
    func testChangesAndBroadcastsCrossInstances() async throws {
        let first = try await startTestApp()
        let second = try await startTestApp(databaseURL: first.databaseURL)
        let user = try await first.makeUser()
        let quotes = try await first.insertQuotes(["One"])
        let watcher = try second.realtime()
        let changes: [[String: Any]] = [["event": "INSERT", "schema": "public", "table": "user_favorites"]]
        XCTAssertEqual(status(watcher.join("realtime:room", changes: changes, token: user.accessToken)), "ok")
        XCTAssertEqual(
            try first.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        XCTAssertEqual((watcher.nextChange()?["record"] as? [String: Any])?["quote_id"] as? String, lower(quotes[0]))

        let sender = try first.realtime()
        XCTAssertEqual(status(sender.join("realtime:room", broadcast: ["ack": true])), "ok")
        func broadcast(size: Int) -> [String: Any]? {
            // The payload as the server encodes it (sorted keys) is exactly `size` bytes.
            let overhead = #"{"event":"e","payload":{"p":""},"type":"broadcast"}"#.utf8.count
            let pad = String(repeating: "x", count: size - overhead)
            return sender.reply(
                to: sender.push(
                    "realtime:room", "broadcast", ["type": "broadcast", "event": "e", "payload": ["p": pad]]))
        }
        XCTAssertEqual(status(broadcast(size: 7_000)), "ok")
        let relayed = try XCTUnwrap(watcher.next("broadcast")?["payload"] as? [String: Any])
        XCTAssertEqual(((relayed["payload"] as? [String: Any])?["p"] as? String)?.count, 7_000 - 51)
        let refused = broadcast(size: 7_001)
        XCTAssertEqual(status(refused), "error")
        XCTAssertTrue(reason(refused)?.contains("at most 7000 bytes") == true)
        XCTAssertTrue(watcher.staysQuiet(for: 0.5) { $0["event"] as? String != "broadcast" })
        XCTAssertTrue(sender.staysQuiet(for: 0.2) { $0["event"] as? String != "broadcast" }, "no echo without self")
    }
}
