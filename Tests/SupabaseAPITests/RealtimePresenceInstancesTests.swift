import Foundation
import TestSupport
import XCTest

/// Presence and the per-user socket limit across instances on one database (RealtimePeers): a track, an untrack
/// and a closed socket on one instance reach the other's sockets; a join there lists the first's members; the
/// members of an instance killed leave within the lease; the limit counts both instances' sockets.
final class RealtimePresenceInstancesTests: XCTestCase {
    private func track(_ socket: WebSocketTestClient, _ topic: String, _ payload: [String: Any]) -> String? {
        status(
            socket.reply(
                to: socket.push(topic, "presence", ["type": "presence", "event": "track", "payload": payload])))
    }

    /// The metas listed under `key` in a presence_diff's `joins` or `leaves`.
    private func metas(_ diff: [String: Any]?, _ side: String, _ key: String) -> [[String: Any]]? {
        ((diff?[side] as? [String: Any])?[key] as? [String: Any])?["metas"] as? [[String: Any]]
    }

    func testTrackUntrackAndAClosedSocketOnOneInstanceReachTheOther() async throws {
        let first = try await startTestApp()
        let second = try await startTestApp(databaseURL: first.databaseURL)
        let watcher = try second.realtime()
        XCTAssertEqual(status(watcher.join("realtime:room", presence: ["key": "bob", "enabled": true])), "ok")
        XCTAssertNotNil(watcher.next("presence_state"))
        let ada = try first.realtime()
        XCTAssertEqual(status(ada.join("realtime:room", presence: ["key": "ada", "enabled": true])), "ok")

        XCTAssertEqual(track(ada, "realtime:room", ["status": "online"]), "ok")
        let joined = watcher.next("presence_diff")?["payload"] as? [String: Any]
        XCTAssertEqual(metas(joined, "joins", "ada")?.first?["status"] as? String, "online")
        XCTAssertNotNil(metas(joined, "joins", "ada")?.first?["phx_ref"] as? String)

        // A join on the second instance lists the first's member.
        let late = try second.realtime()
        XCTAssertEqual(status(late.join("realtime:room", presence: ["key": "cy", "enabled": true])), "ok")
        let state = try XCTUnwrap(late.next("presence_state")?["payload"] as? [String: Any])
        XCTAssertEqual(
            ((state["ada"] as? [String: Any])?["metas"] as? [[String: Any]])?.first?["status"] as? String, "online")

        // Tracking again replaces the meta: one leave and one join.
        XCTAssertEqual(track(ada, "realtime:room", ["status": "away"]), "ok")
        let replaced = watcher.next("presence_diff")?["payload"] as? [String: Any]
        XCTAssertEqual(metas(replaced, "joins", "ada")?.first?["status"] as? String, "away")
        XCTAssertEqual(metas(replaced, "leaves", "ada")?.first?["status"] as? String, "online")

        XCTAssertEqual(
            status(ada.reply(to: ada.push("realtime:room", "presence", ["type": "presence", "event": "untrack"]))), "ok"
        )
        let left = watcher.next("presence_diff")?["payload"] as? [String: Any]
        XCTAssertEqual(metas(left, "leaves", "ada")?.first?["status"] as? String, "away")

        XCTAssertEqual(track(ada, "realtime:room", ["status": "back"]), "ok")
        XCTAssertEqual(
            metas(watcher.next("presence_diff")?["payload"] as? [String: Any], "joins", "ada")?.first?["status"]
                as? String, "back")
        ada.sendClose()
        XCTAssertEqual(
            metas(watcher.next("presence_diff")?["payload"] as? [String: Any], "leaves", "ada")?.first?["status"]
                as? String, "back")

        // Payload limits as for a broadcast: a meta of 7,000 bytes is shared, one past is refused.
        let big = try first.realtime()
        XCTAssertEqual(status(big.join("realtime:room", presence: ["key": "big", "enabled": true])), "ok")
        let overhead = #"{"p":""}"#.utf8.count
        XCTAssertEqual(track(big, "realtime:room", ["p": String(repeating: "x", count: 7_000 - overhead)]), "ok")
        XCTAssertNotNil(metas(watcher.next("presence_diff")?["payload"] as? [String: Any], "joins", "big"))
        let refused = big.reply(
            to: big.push(
                "realtime:room", "presence",
                [
                    "type": "presence", "event": "track",
                    "payload": ["p": String(repeating: "x", count: 7_001 - overhead)],
                ]))
        XCTAssertEqual(status(refused), "error")
        XCTAssertEqual(reason(refused), "a presence payload takes at most 7000 bytes")
        XCTAssertTrue(watcher.staysQuiet(for: 0.5) { $0["event"] as? String != "presence_diff" })
    }

    /// The second instance's listener is killed and an untrack is made meanwhile (missed, or heard if the listener
    /// was back in time): either way the member leaves there, and the member still tracked stays.
    func testAReconnectedListenerDropsWhatItMissedAndKeepsTheRest() async throws {
        let first = try await startTestApp()
        let second = try await startTestApp(databaseURL: first.databaseURL)
        let watcher = try second.realtime()
        XCTAssertEqual(status(watcher.join("realtime:room", presence: ["key": "bob", "enabled": true])), "ok")
        var members: [WebSocketTestClient] = []
        for key in ["ada", "eve"] {
            let socket = try first.realtime()
            XCTAssertEqual(status(socket.join("realtime:room", presence: ["key": key, "enabled": true])), "ok")
            XCTAssertEqual(track(socket, "realtime:room", ["name": key]), "ok")
            XCTAssertNotNil(metas(watcher.next("presence_diff")?["payload"] as? [String: Any], "joins", key))
            members.append(socket)
        }
        let listener = try XCTUnwrap(second.application.supabase.realtime.changesListener)
        let pid = listener.backendPID
        XCTAssertNotEqual(pid, 0)
        try await first.withConnection { connection in try connection.query("SELECT pg_terminate_backend(\(pid))") }
        XCTAssertEqual(
            status(
                members[0].reply(
                    to: members[0].push("realtime:room", "presence", ["type": "presence", "event": "untrack"]))), "ok")
        let left = watcher.nextMessage(within: 20) {
            !($0["event"] as? String == "presence_diff"
                && metas($0["payload"] as? [String: Any], "leaves", "ada") != nil)
        }
        XCTAssertNotNil(left, "ada left on the second instance")
        for _ in 0..<500 where listener.listeningSessions < 2 { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertGreaterThanOrEqual(listener.listeningSessions, 2)
        XCTAssertTrue(
            watcher.staysQuiet(for: 1) { $0["event"] as? String != "presence_diff" }, "eve, re-announced, stays")
        let late = try second.realtime()
        XCTAssertEqual(status(late.join("realtime:room", presence: ["key": "cy", "enabled": true])), "ok")
        XCTAssertEqual((late.next("presence_state")?["payload"] as? [String: Any])?.keys.sorted(), ["eve"])
    }

    func testTheMembersOfAKilledInstanceLeaveWithinTheLease() async throws {
        let first = try await startTestApp()
        let server = try ServerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": first.databaseURL, "JWT_SECRET": "test-secret-0123456789-0123456789-abcdef",
                "SUPABASE_ANON_KEY": first.anonKey, "PORT": "0",
            ])
        defer { server.signal(SIGKILL) }
        let port = try await server.waitForPort()
        let watcher = try first.realtime()
        XCTAssertEqual(status(watcher.join("realtime:room", presence: ["key": "bob", "enabled": true])), "ok")
        let doomed = try WebSocketTestClient(
            port: port, path: "/realtime/v1/websocket?apikey=\(first.anonKey)&vsn=1.0.0", source: nil,
            receiveBuffer: nil)
        XCTAssertEqual(status(doomed.join("realtime:room", presence: ["key": "ada", "enabled": true])), "ok")
        XCTAssertEqual(track(doomed, "realtime:room", ["status": "online"]), "ok")
        XCTAssertNotNil(metas(watcher.next("presence_diff")?["payload"] as? [String: Any], "joins", "ada"))

        server.signal(SIGKILL)
        _ = try await server.waitForExit()
        // The lease is 10 s: the leave comes within it and the next sweep, whatever else arrives first.
        let left = watcher.nextMessage(within: 30) {
            !($0["event"] as? String == "presence_diff"
                && metas($0["payload"] as? [String: Any], "leaves", "ada") != nil)
        }
        XCTAssertNotNil(left, "the killed instance's member left")
        let late = try first.realtime()
        XCTAssertEqual(status(late.join("realtime:room", presence: ["key": "cy", "enabled": true])), "ok")
        XCTAssertEqual((late.next("presence_state")?["payload"] as? [String: Any])?.keys.sorted(), [])
    }

    func testTheSocketsPerUserLimitCountsBothInstances() async throws {
        let first = try await startTestApp { $0.realtimeConnectionsPerUser = 2 }
        let second = try await startTestApp(databaseURL: first.databaseURL) { $0.realtimeConnectionsPerUser = 2 }
        let user = try await first.makeUser()
        let hubs = [first.application.supabase.realtime, second.application.supabase.realtime]
        func counted(_ count: Int) async throws {
            for _ in 0..<500 where !hubs.allSatisfy({ $0.sockets(ofUser: user.id) == count }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            XCTAssertEqual(hubs.map { $0.sockets(ofUser: user.id) }, [count, count], "both instances count them")
        }
        let onFirst = try first.realtime()
        XCTAssertEqual(status(onFirst.join("realtime:a", token: user.accessToken)), "ok")
        try await counted(1)
        let onSecond = try second.realtime()
        XCTAssertEqual(status(onSecond.join("realtime:a", token: user.accessToken)), "ok", "the edge: 2")
        try await counted(2)
        for app in [first, second] {
            let past = try app.realtime()
            XCTAssertEqual(
                reason(past.join("realtime:a", token: user.accessToken)), "too many connections for this user (2)")
        }
        // A second channel of the same user on a counted socket is no new socket.
        XCTAssertEqual(status(onSecond.join("realtime:b", token: user.accessToken)), "ok")

        onSecond.sendClose()
        try await counted(1)
        let again = try first.realtime()
        XCTAssertEqual(status(again.join("realtime:a", token: user.accessToken)), "ok")
        try await counted(2)
    }
}
