import Foundation
import TestSupport
import XCTest

/// `/realtime/v1/websocket`'s door and the Phoenix protocol around the channels: handshake refusals, heartbeats,
/// messages that are not Phoenix messages, unknown topics, leaving, and the 2.0.0 serializer supabase-swift
/// 2.55.1 uses by default.
final class RealtimeProtocolTests: XCTestCase {
    func testHandshakesWithoutAValidKeyOrVersionAreRefused() async throws {
        let app = try await startTestApp()
        let port = app.application.port
        XCTAssertEqual(try WebSocketTestClient(port: port, path: "/realtime/v1/websocket?vsn=1.0.0").status, 401)
        XCTAssertEqual(try app.realtime(key: "not-the-key").status, 401)
        let user = try await app.makeUser()
        XCTAssertEqual(try app.realtime(key: user.accessToken).status, 401, "a user's token is no API key")
        XCTAssertEqual(try app.realtime(vsn: "3.0.0").status, 400)
        let post = try WebSocketTestClient(
            port: port, path: "/realtime/v1/websocket?apikey=\(app.anonKey)&vsn=1.0.0", method: "POST")
        XCTAssertEqual(post.status, 405)
        let plain = try WebSocketTestClient(
            port: port, path: "/realtime/v1/websocket?apikey=\(app.anonKey)", extraHeaders: ["Upgrade": nil])
        XCTAssertEqual(plain.status, 426)
        XCTAssertEqual(app.application.supabase.realtime.openSockets, 0, "a refused handshake holds no place")
        XCTAssertEqual(try app.realtime().status, 101)
        XCTAssertEqual(try app.realtime(vsn: "2.0.0").status, 101)
    }

    func testHeartbeatsUnknownTopicsAndLeaving() async throws {
        let app = try await startTestApp()
        let socket = try app.realtime()
        let heartbeat = socket.push("phoenix", "heartbeat")
        let answer = try XCTUnwrap(socket.nextMessage())
        XCTAssertEqual(answer["topic"] as? String, "phoenix")
        XCTAssertEqual(answer["event"] as? String, "phx_reply")
        XCTAssertEqual(answer["ref"] as? String, heartbeat)
        XCTAssertEqual(status(answer["payload"] as? [String: Any]), "ok")
        // supabase-py sends its heartbeat with a null ref.
        socket.send(json: ["topic": "phoenix", "event": "heartbeat", "payload": [:], "ref": NSNull()])
        XCTAssertEqual(socket.next("phx_reply")?["ref"] as? NSNull, NSNull())

        let unjoined = socket.reply(to: socket.push("realtime:nowhere", "broadcast", ["event": "x", "payload": [:]]))
        XCTAssertEqual(status(unjoined), "error")
        XCTAssertEqual(reason(unjoined), "unmatched topic")
        XCTAssertEqual(reason(socket.join("elsewhere")), "unmatched topic")

        XCTAssertEqual(status(socket.join("realtime:room")), "ok")
        let leave = socket.push("realtime:room", "phx_leave")
        XCTAssertEqual(status(socket.reply(to: leave)), "ok")
        XCTAssertEqual(socket.next("phx_close")?["topic"] as? String, "realtime:room")
        XCTAssertEqual(reason(socket.reply(to: socket.push("realtime:room", "phx_leave"))), "unmatched topic")
    }

    func testTextThatIsNoPhoenixMessageClosesTheSocket() async throws {
        let app = try await startTestApp()
        let socket = try app.realtime()
        socket.send(text: "{not json")
        XCTAssertEqual(socket.closeCode(), 1007)
        let arrays = try app.realtime()
        arrays.send(text: #"[null,"1","phoenix","heartbeat",{}]"#)
        XCTAssertEqual(arrays.closeCode(), 1007, "an array is vsn 2.0.0's, not 1.0.0's")
    }

    func testVersionTwoSpeaksInArrays() async throws {
        let app = try await startTestApp()
        let socket = try app.realtime(vsn: "2.0.0")
        socket.send(text: #"[null,"7","phoenix","heartbeat",{}]"#)
        let frame = try XCTUnwrap(socket.nextFrame())
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(frame.payload)) as? [Any])
        XCTAssertEqual(reply.count, 5)
        XCTAssertTrue(reply[0] is NSNull)
        XCTAssertEqual(reply[1] as? String, "7")
        XCTAssertEqual(reply[2] as? String, "phoenix")
        XCTAssertEqual(reply[3] as? String, "phx_reply")
        XCTAssertEqual((reply[4] as? [String: Any])?["status"] as? String, "ok")
        socket.send(text: #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"8"}"#)
        XCTAssertEqual(socket.closeCode(), 1007, "an object is vsn 1.0.0's, not 2.0.0's")
    }
}
