import Foundation
import TestSupport
import XCTest

/// Broadcast and presence between the sockets joined to one topic (on one instance).
final class RealtimeBroadcastTests: XCTestCase {
    func testBroadcastReachesOthersAndTheSenderOnlyWithSelfAndAck() async throws {
        let app = try await startTestApp()
        let sender = try app.realtime()
        let listener = try app.realtime()
        let quiet = try app.realtime()
        XCTAssertEqual(status(sender.join("realtime:chat", broadcast: ["self": true, "ack": true])), "ok")
        XCTAssertEqual(status(listener.join("realtime:chat")), "ok")
        XCTAssertEqual(status(quiet.join("realtime:other")), "ok")
        let ref = sender.push(
            "realtime:chat", "broadcast", ["type": "broadcast", "event": "typing", "payload": ["who": "ada"]])
        XCTAssertEqual(status(sender.reply(to: ref)), "ok", "ack: the sender hears back")
        for socket in [sender, listener] {
            let message = try XCTUnwrap(socket.next("broadcast"))
            XCTAssertEqual(message["topic"] as? String, "realtime:chat")
            let payload = try XCTUnwrap(message["payload"] as? [String: Any])
            XCTAssertEqual(payload["event"] as? String, "typing")
            XCTAssertEqual((payload["payload"] as? [String: Any])?["who"] as? String, "ada")
        }
        // Without self, the sender does not get its own message; without ack, no reply.
        let ref2 = listener.push(
            "realtime:chat", "broadcast", ["type": "broadcast", "event": "typing", "payload": [:]])
        XCTAssertEqual(sender.next("broadcast")?["topic"] as? String, "realtime:chat")
        XCTAssertTrue(listener.staysQuiet(for: 0.5), "no echo, no reply to \(ref2)")
        XCTAssertTrue(quiet.staysQuiet(for: 0.2), "another topic hears nothing")
    }

    func testAVersionTwoBinaryBroadcastIsRelayed() async throws {
        let app = try await startTestApp()
        let sender = try app.realtime(vsn: "2.0.0")
        let listener = try app.realtime()
        sender.send(text: #"["1","1","realtime:chat","phx_join",{"config":{"broadcast":{"self":false,"ack":false}}}]"#)
        XCTAssertNotNil(sender.nextFrame())
        XCTAssertEqual(status(listener.join("realtime:chat")), "ok")
        // supabase-swift 2.55.1's push: kind 3, then the lengths of join_ref, ref, topic, event and meta, then the
        // payload's encoding (1: JSON).
        let fields = ["1", "2", "realtime:chat", "moved", ""].map { Array($0.utf8) }
        let frame = [UInt8(3)] + fields.map { UInt8($0.count) } + [1] + fields.flatMap { $0 } + Array(#"{"x":1}"#.utf8)
        sender.sendFrame(opcode: 0x2, payload: frame)
        let payload = try XCTUnwrap(listener.next("broadcast")?["payload"] as? [String: Any])
        XCTAssertEqual(payload["event"] as? String, "moved")
        XCTAssertEqual((payload["payload"] as? [String: Any])?["x"] as? Int, 1)
    }

    func testPresenceStateOnJoinAndDiffsOnTrackUntrackAndLeaving() async throws {
        let app = try await startTestApp()
        let first = try app.realtime()
        XCTAssertEqual(status(first.join("realtime:room", presence: ["key": "ada", "enabled": true])), "ok")
        XCTAssertEqual((first.next("presence_state")?["payload"] as? [String: Any])?.count, 0)
        XCTAssertEqual(
            status(
                first.reply(
                    to: first.push(
                        "realtime:room", "presence",
                        ["type": "presence", "event": "track", "payload": ["status": "online"]]))), "ok")
        let joined = try XCTUnwrap(first.next("presence_diff")?["payload"] as? [String: Any])
        let metas = ((joined["joins"] as? [String: Any])?["ada"] as? [String: Any])?["metas"] as? [[String: Any]]
        XCTAssertEqual(metas?.first?["status"] as? String, "online")
        XCTAssertNotNil(metas?.first?["phx_ref"] as? String)

        let second = try app.realtime()
        XCTAssertEqual(status(second.join("realtime:room", presence: ["key": "bob", "enabled": true])), "ok")
        let state = try XCTUnwrap(second.next("presence_state")?["payload"] as? [String: Any])
        XCTAssertEqual(Array(state.keys), ["ada"])

        XCTAssertEqual(
            status(first.reply(to: first.push("realtime:room", "presence", ["type": "presence", "event": "untrack"]))),
            "ok")
        let left = try XCTUnwrap(second.next("presence_diff")?["payload"] as? [String: Any])
        XCTAssertNotNil((left["leaves"] as? [String: Any])?["ada"])
        XCTAssertEqual(
            status(
                first.reply(
                    to: first.push("realtime:room", "presence", ["type": "presence", "event": "track", "payload": [:]]))
            ), "ok")
        XCTAssertNotNil(
            ((second.next("presence_diff")?["payload"] as? [String: Any])?["joins"] as? [String: Any])?["ada"])
        // A socket that goes away leaves.
        first.sendClose()
        XCTAssertNotNil(
            ((second.next("presence_diff")?["payload"] as? [String: Any])?["leaves"] as? [String: Any])?["ada"])
    }
}
