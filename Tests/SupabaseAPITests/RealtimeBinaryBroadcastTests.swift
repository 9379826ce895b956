import Foundation
import TestSupport
import XCTest

/// Broadcasts whose payload is bytes (supabase-swift's `broadcast(event:data:)`, vsn 2.0.0's binary push with
/// encoding 0): relayed as Realtime's binary frame of kind 4 to vsn 2.0.0 sockets, on this instance and the
/// others, and not at all to vsn 1.0.0 sockets, which cannot carry bytes.
final class RealtimeBinaryBroadcastTests: XCTestCase {
    func testABinaryPayloadReachesVersionTwoSocketsAsKindFour() async throws {
        let app = try await startTestApp()
        let sender = try app.realtime(vsn: "2.0.0")
        let listener = try app.realtime(vsn: "2.0.0")
        let oldClient = try app.realtime()
        XCTAssertEqual(sender.joinV2("realtime:files", broadcast: #"{"self":true,"ack":true}"#), "ok")
        XCTAssertEqual(listener.joinV2("realtime:files"), "ok")
        XCTAssertEqual(status(oldClient.join("realtime:files")), "ok")

        let bytes: [UInt8] = [0, 255, 1, 254, 0x7B, 0x22]  // not JSON, not UTF-8
        sender.sendFrame(opcode: 0x2, payload: binaryPush(ref: "7", topic: "realtime:files", event: "blob", bytes))
        XCTAssertTrue(sender.nextFrame()?.text.contains(#""7","realtime:files","phx_reply",{"status":"ok""#) == true)
        for socket in [sender, listener] {
            let frame = try XCTUnwrap(socket.nextFrame(), "self: the sender hears it too")
            XCTAssertEqual(frame.opcode, 0x2)
            XCTAssertEqual(frame.payload, kindFour(topic: "realtime:files", event: "blob", bytes))
        }
        XCTAssertTrue(oldClient.staysQuiet(for: 0.5), "vsn 1.0.0 has no way to carry bytes")

        // A JSON payload in the same binary push (encoding 1) still reaches both kinds of socket.
        sender.sendFrame(
            opcode: 0x2,
            payload: binaryPush(ref: "8", topic: "realtime:files", event: "j", Array(#"{"a":1}"#.utf8), encoding: 1))
        XCTAssertEqual(
            ((oldClient.next("broadcast")?["payload"] as? [String: Any])?["payload"] as? [String: Any])?["a"] as? Int, 1
        )
    }

    func testBinaryBroadcastsCrossInstancesWithinTheirLimit() async throws {
        let first = try await startTestApp()
        let second = try await startTestApp(databaseURL: first.databaseURL)
        try await second.untilRealtimeListens()
        let sender = try first.realtime(vsn: "2.0.0")
        let watcher = try second.realtime(vsn: "2.0.0")
        XCTAssertEqual(sender.joinV2("realtime:room", broadcast: #"{"ack":true}"#), "ok")
        XCTAssertEqual(watcher.joinV2("realtime:room"), "ok")
        // base64 of 5,250 bytes is 7,000 characters: the most a notification carries.
        let largest = (0..<5_250).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        sender.sendFrame(opcode: 0x2, payload: binaryPush(ref: "1", topic: "realtime:room", event: "big", largest))
        XCTAssertTrue(sender.nextFrame()?.text.contains(#""status":"ok""#) == true)
        let frame = try XCTUnwrap(watcher.nextFrame())
        XCTAssertEqual(frame.opcode, 0x2)
        XCTAssertEqual(frame.payload, kindFour(topic: "realtime:room", event: "big", largest))

        sender.sendFrame(
            opcode: 0x2, payload: binaryPush(ref: "2", topic: "realtime:room", event: "big", largest + [0]))
        let refusal = try XCTUnwrap(sender.nextFrame()?.text)
        XCTAssertTrue(refusal.contains(#""status":"error""#) && refusal.contains("at most 5250 bytes"), refusal)
        XCTAssertNil(watcher.nextFrame(within: 0.5), "nothing of a refused broadcast")
    }

    func testAnUnknownPayloadEncodingClosesTheSocket() async throws {
        let app = try await startTestApp()
        let sender = try app.realtime(vsn: "2.0.0")
        XCTAssertEqual(sender.joinV2("realtime:files"), "ok")
        sender.sendFrame(
            opcode: 0x2, payload: binaryPush(ref: "1", topic: "realtime:files", event: "e", [1], encoding: 9))
        XCTAssertEqual(sender.closeCode(), 1003)
    }

    /// supabase-swift 2.55.1's push: kind 3, the lengths of join_ref, ref, topic, event and meta, the encoding.
    private func binaryPush(ref: String, topic: String, event: String, _ bytes: [UInt8], encoding: UInt8 = 0)
        -> [UInt8]
    {
        let fields = ["1", ref, topic, event, ""].map { Array($0.utf8) }
        return [3] + fields.map { UInt8($0.count) } + [encoding] + fields.flatMap { $0 } + bytes
    }

    /// What Realtime sends a vsn 2.0.0 socket: kind 4, the lengths of topic, event and meta, encoding 0.
    private func kindFour(topic: String, event: String, _ bytes: [UInt8]) -> [UInt8] {
        [4, UInt8(topic.utf8.count), UInt8(event.utf8.count), 0, 0] + Array(topic.utf8) + Array(event.utf8) + bytes
    }
}

extension WebSocketTestClient {
    /// Joins as supabase-swift does (vsn 2.0.0, join_ref "1"): the reply's status.
    func joinV2(_ topic: String, broadcast: String = #"{"self":false,"ack":false}"#, config extra: String = "")
        -> String?
    {
        let ref = String(Int.random(in: 100...999_999))
        send(
            text:
                #"["1","\#(ref)","\#(topic)","phx_join",{"config":{"broadcast":\#(broadcast),"presence":{"key":""},"private":false\#(extra)}}]"#
        )
        while let frame = nextFrame() {
            guard let array = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [Any], array.count == 5,
                array[1] as? String == ref
            else { continue }
            return (array[4] as? [String: Any])?["status"] as? String
        }
        return nil
    }
}
