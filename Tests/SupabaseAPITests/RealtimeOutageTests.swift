import Foundation
import TestSupport
import XCTest

/// PostgreSQL stops under open Realtime sockets: they stay open and heartbeats are answered; each channel with
/// `postgres_changes` is told (`system`, error) that changes may be missed; a join that needs the database is
/// refused with its reason, one that does not is admitted; once PostgreSQL is back the channels are told
/// (`system`, ok) and changes flow again.
final class RealtimeOutageTests: XCTestCase {
    func testSocketsOutliveAnOutageAndChangesFlowAgainAfterIt() async throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "realtime-outage")
        let url = try cluster.start()
        let app = try await startTestApp(databaseURL: url)
        addTeardownBlock { try? cluster.stop() }
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two"])
        let socket = try app.realtime()
        let changes: [[String: Any]] = [["event": "INSERT", "schema": "public", "table": "user_favorites"]]
        XCTAssertEqual(status(socket.join("realtime:mine", changes: changes, token: user.accessToken)), "ok")
        XCTAssertEqual((socket.next("system")?["payload"] as? [String: Any])?["status"] as? String, "ok")

        try cluster.stop()
        let lost = try XCTUnwrap(socket.next("system")?["payload"] as? [String: Any])
        XCTAssertEqual(lost["status"] as? String, "error")
        XCTAssertEqual(lost["extension"] as? String, "postgres_changes")
        XCTAssertEqual(lost["channel"] as? String, "mine")
        XCTAssertTrue((lost["message"] as? String)?.contains("PostgreSQL is unavailable") == true)
        XCTAssertEqual(status(socket.reply(to: socket.push("phoenix", "heartbeat"))), "ok", "heartbeats go on")

        let late = try app.realtime()
        let refused = late.join("realtime:mine", changes: changes, token: user.accessToken)
        XCTAssertEqual(status(refused), "error")
        XCTAssertEqual(reason(refused), "Unable to check the token: the database is unavailable, try again")
        XCTAssertEqual(status(late.join("realtime:chat")), "ok", "the anon key needs no database")
        let anonChanges: [[String: Any]] = [["event": "INSERT", "schema": "public", "table": "quotes"]]
        XCTAssertEqual(status(late.join("realtime:quotes", changes: anonChanges)), "ok")
        let notYet = try XCTUnwrap(late.next("system")?["payload"] as? [String: Any])
        XCTAssertEqual(notYet["status"] as? String, "error", "joined, but told changes do not flow yet")

        _ = try cluster.start()
        for client in [socket, late] {
            let back = try XCTUnwrap(client.next("system", within: 20)?["payload"] as? [String: Any])
            XCTAssertEqual(back["status"] as? String, "ok")
            XCTAssertEqual(back["message"] as? String, "Subscribed to PostgreSQL")
        }
        // The pool reconnects on its own; the write is retried while it does (at most ~20 s).
        var written = 0
        for _ in 0..<100 where written != 201 {
            written = try app.client.send("PUT", "/v1/favorites/\(lower(quotes[1]))", headers: user.authorization)
                .status
            if written != 201 { try await Task.sleep(for: .milliseconds(200)) }
        }
        XCTAssertEqual(written, 201)
        XCTAssertEqual((socket.nextChange()?["record"] as? [String: Any])?["quote_id"] as? String, lower(quotes[1]))
        let metrics = try app.client.get("/metrics").text
        XCTAssertTrue(metrics.contains("realtime_listener_losses_total 1\n"), metrics)
        XCTAssertTrue(metrics.contains(#"realtime_refusals_total{reason="database_unavailable"} 1"#))
    }
}
