import Foundation
import TestSupport
import XCTest

/// Realtime's limits, each at its edge and one past it: sockets per address and per user, channels per socket,
/// messages per second and message size. (A consumer that stops reading: `WebSocketTests`.)
final class RealtimeLimitsTests: XCTestCase {
    func testSocketsPerAddressAndPerUser() async throws {
        let app = try await startTestApp {
            $0.realtimeConnectionsPerAddress = 3
            $0.realtimeConnectionsPerUser = 2
        }
        let user = try await app.makeUser()
        let sockets = try (0..<3).map { _ in try app.realtime() }
        XCTAssertEqual(sockets.map(\.status), [101, 101, 101])
        let refused = try app.realtime()
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(refused.header("Retry-After"), "30")
        XCTAssertEqual(try app.realtime(source: "127.0.0.2").status, 101, "another address has its own count")

        XCTAssertEqual(status(sockets[0].join("realtime:a", token: user.accessToken)), "ok")
        XCTAssertEqual(status(sockets[1].join("realtime:a", token: user.accessToken)), "ok")
        XCTAssertEqual(status(sockets[1].join("realtime:b", token: user.accessToken)), "ok", "one socket counts once")
        let third = sockets[2].join("realtime:a", token: user.accessToken)
        XCTAssertEqual(status(third), "error")
        XCTAssertTrue(reason(third)?.contains("too many connections for this user") == true)
        sockets[0].sendClose()
        XCTAssertTrue(sockets[0].isClosed())
        var admitted = false
        for _ in 0..<50 where !admitted {
            admitted = status(sockets[2].join("realtime:a", token: user.accessToken)) == "ok"
            if !admitted { try await Task.sleep(for: .milliseconds(50)) }
        }
        XCTAssertTrue(admitted, "a closed socket gives its place back")
        XCTAssertEqual(try app.realtime().status, 101)
    }

    /// The instance's sockets in all (the HTTP table of 40 less its reserve of 10: 30), shared between addresses:
    /// at the edge every handshake passes; one past it, an address that holds as much as any other is refused with
    /// 503, and a newcomer takes the place of a socket of the address holding the most (closed with 1013), so a
    /// flood from some addresses never starves another.
    func testSocketsInAllAreSharedBetweenAddresses() async throws {
        let app = try await startTestApp { $0.httpMaxConnections = 40 }
        XCTAssertEqual(app.application.supabase.realtime.limits.sockets, 30)
        let first = try (0..<15).map { _ in try app.realtime(source: "127.0.0.2") }
        let second = try (0..<15).map { _ in try app.realtime(source: "127.0.0.3") }
        XCTAssertEqual((first + second).map(\.status), Array(repeating: 101, count: 30), "the edge: 30 sockets")

        let past = try app.realtime(source: "127.0.0.2")
        XCTAssertEqual(past.status, 503, "as many as any other address: no one to make room")
        XCTAssertEqual(past.header("Retry-After"), "30")

        let newcomer = try app.realtime(source: "127.0.0.4")
        XCTAssertEqual(newcomer.status, 101, "an address with none takes a place")
        XCTAssertEqual(status(newcomer.join("realtime:room")), "ok")
        let evicted = (first + second).filter { $0.closeCode(within: 0.1) == 1013 }
        XCTAssertEqual(evicted.count, 1, "exactly one socket made room")
        XCTAssertEqual(app.application.supabase.realtime.openSockets, 30)
        let survivor = try XCTUnwrap((first + second).first { socket in !evicted.contains { $0 === socket } })
        XCTAssertEqual(status(survivor.join("realtime:room")), "ok", "the others go on")
    }

    func testChannelsPerConnection() async throws {
        let app = try await startTestApp { $0.realtimeChannelsPerConnection = 2 }
        let socket = try app.realtime()
        XCTAssertEqual(status(socket.join("realtime:one")), "ok")
        XCTAssertEqual(status(socket.join("realtime:two")), "ok")
        XCTAssertEqual(status(socket.join("realtime:two")), "ok", "joining a topic again replaces it")
        let refused = socket.join("realtime:three")
        XCTAssertEqual(status(refused), "error")
        XCTAssertTrue(reason(refused)?.contains("too many channels") == true)
        XCTAssertEqual(status(socket.reply(to: socket.push("realtime:one", "phx_leave"))), "ok")
        XCTAssertEqual(status(socket.join("realtime:three")), "ok")
    }

    func testMessagesPerSecondBurstThenClose() async throws {
        let app = try await startTestApp { $0.realtimeMessagesPerSecond = 5 }
        let socket = try app.realtime()
        // The burst allowance (twice the rate) is always there for a fresh socket.
        let refs = (0..<10).map { _ in socket.push("phoenix", "heartbeat") }
        for ref in refs { XCTAssertEqual(status(socket.reply(to: ref)), "ok") }
        for _ in 0..<100 { socket.push("phoenix", "heartbeat") }
        XCTAssertEqual(socket.closeCode(), 1008)

        // Reconnecting does not buy a fresh burst: a new socket from that address starts without one (10 s).
        let again = try app.realtime()
        for _ in 0..<10 { again.push("phoenix", "heartbeat") }
        XCTAssertEqual(again.closeCode(), 1008)
        let elsewhere = try app.realtime(source: "127.0.0.9")
        let refs2 = (0..<10).map { _ in elsewhere.push("phoenix", "heartbeat") }
        for ref in refs2 { XCTAssertEqual(status(elsewhere.reply(to: ref)), "ok", "another address keeps its burst") }
    }

    func testAMessageOfSixtyFourKiBPassesAndOneByteMoreCloses() async throws {
        let app = try await startTestApp()
        let socket = try app.realtime()
        func heartbeat(paddedTo size: Int) -> String {
            let head = #"{"topic":"phoenix","event":"heartbeat","ref":"1","payload":{"pad":""#
            let tail = #""}}"#
            return head + String(repeating: "x", count: size - head.utf8.count - tail.utf8.count) + tail
        }
        socket.send(text: heartbeat(paddedTo: 64 * 1024))
        XCTAssertEqual(status(socket.reply(to: "1")), "ok")
        socket.send(text: heartbeat(paddedTo: 64 * 1024 + 1))
        XCTAssertEqual(socket.closeCode(), 1009)
    }
}
