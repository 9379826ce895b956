import Foundation
import HTTPServer
import Logging
import Synchronization
import TestSupport
import XCTest

/// RFC 6455 over a real socket, with a handler that echoes each message: the handshake and its refusals,
/// masking, fragmentation, ping, the closing handshake, the size limits and a consumer that stops reading.
final class WebSocketTests: XCTestCase {
    /// Echoes text as text and binary as binary; "close" makes the server close with 1000; "flood:N" sends N
    /// messages of 1 KiB at once.
    private final class Echo: WebSocketHandler {
        let closedCount = Atomic<Int>(0)

        func received(text: String, on connection: WebSocketConnection) {
            if text == "close" { return connection.close(.normal, reason: "bye") }
            if text.hasPrefix("flood:"), let count = Int(text.dropFirst(6)) {
                let block = String(repeating: "x", count: 1024)
                for _ in 0..<count where connection.send(text: block) {}
                return
            }
            connection.send(text: text)
        }

        func received(binary: [UInt8], on connection: WebSocketConnection) { connection.send(binary: binary) }

        func closed(_ connection: WebSocketConnection) { closedCount.add(1, ordering: .relaxed) }
    }

    private let echo = Echo()

    private func startServer(
        settings: WebSocketSettings = WebSocketSettings(), configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws -> HTTPServer {
        let echo = self.echo
        let routes = [
            Route(
                .get, "/ws",
                handler: Handler { request in WebSocketUpgrade.response(to: request, settings: settings) { _ in echo } }
            )
        ]
        var configuration = HTTPServerConfiguration(port: 0, refusalDelay: .zero)
        configure(&configuration)
        let server = HTTPServer(
            configuration: configuration, router: Router(routes: routes), logger: Logger(label: "test"))
        try server.start()
        addTeardownBlock { await server.shutdown() }
        return server
    }

    private func connect(_ server: HTTPServer, source: String? = nil, receiveBuffer: Int? = nil) throws
        -> WebSocketTestClient
    {
        let client = try WebSocketTestClient(
            port: server.port, path: "/ws", source: source, receiveBuffer: receiveBuffer)
        XCTAssertEqual(client.status, 101)
        return client
    }

    func testHandshakeAnswersTheKeyAndEchoesText() throws {
        let server = try startServer()
        let client = try connect(server)
        XCTAssertEqual(client.header("Upgrade")?.lowercased(), "websocket")
        // RFC 6455 §1.3's own example, then this client's key.
        let sample = try WebSocketTestClient(
            port: server.port, path: "/ws", extraHeaders: ["Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="])
        XCTAssertEqual(sample.header("Sec-WebSocket-Accept"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        client.send(text: "héllo")
        let frame = try XCTUnwrap(client.nextFrame())
        XCTAssertEqual(frame.opcode, 0x1)
        XCTAssertTrue(frame.fin)
        XCTAssertEqual(frame.text, "héllo")
        client.sendFrame(opcode: 0x2, payload: [0, 1, 2, 255])
        XCTAssertEqual(client.nextFrame()?.payload, [0, 1, 2, 255])
        XCTAssertEqual(server.openWebSockets, 2)
    }

    func testRequestsThatAreNoHandshakeAreRefused() throws {
        let server = try startServer()
        let plain = try WebSocketTestClient(port: server.port, path: "/ws", extraHeaders: ["Upgrade": nil])
        XCTAssertEqual(plain.status, 426)
        let version = try WebSocketTestClient(
            port: server.port, path: "/ws", extraHeaders: ["Sec-WebSocket-Version": "8"])
        XCTAssertEqual(version.status, 426)
        XCTAssertEqual(version.header("Sec-WebSocket-Version"), "13")
        let key = try WebSocketTestClient(port: server.port, path: "/ws", extraHeaders: ["Sec-WebSocket-Key": "short"])
        XCTAssertEqual(key.status, 400)
        let post = try WebSocketTestClient(port: server.port, path: "/ws", method: "POST")
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(server.openWebSockets, 0)
    }

    func testAnUnmaskedFrameClosesWithProtocolError() throws {
        let server = try startServer()
        let client = try connect(server)
        client.sendFrame(opcode: 0x1, payload: Array("hi".utf8), masked: false)
        XCTAssertEqual(client.closeCode(), 1002)
        XCTAssertTrue(client.isClosed())
        XCTAssertTrue(waitUntil { self.echo.closedCount.load(ordering: .relaxed) == 1 })
    }

    func testFragmentsAreReassembledAndPingsAnsweredBetweenThem() throws {
        let server = try startServer()
        let client = try connect(server)
        client.sendFrame(opcode: 0x1, payload: Array("frag".utf8), fin: false)
        client.sendFrame(opcode: 0x9, payload: Array("ping!".utf8))
        client.sendFrame(opcode: 0x0, payload: Array("men".utf8), fin: false)
        client.sendFrame(opcode: 0x0, payload: Array("ted".utf8), fin: true)
        let pong = try XCTUnwrap(client.nextFrame())
        XCTAssertEqual(pong.opcode, 0xA)
        XCTAssertEqual(pong.text, "ping!")
        XCTAssertEqual(client.nextFrame()?.text, "fragmented")
        // A continuation with no message begun is a protocol error.
        client.sendFrame(opcode: 0x0, payload: Array("stray".utf8))
        XCTAssertEqual(client.closeCode(), 1002)
    }

    func testTextThatIsNotUTF8ClosesWith1007() throws {
        let server = try startServer()
        let client = try connect(server)
        client.sendFrame(opcode: 0x1, payload: [0xC3, 0x28])
        XCTAssertEqual(client.closeCode(), 1007)
    }

    func testClosingHandshakeFromEitherSide() throws {
        let server = try startServer()
        let client = try connect(server)
        client.sendClose(code: 1000)
        XCTAssertEqual(client.closeCode(), 1000, "the server answers the client's close")
        XCTAssertTrue(client.isClosed())
        let other = try connect(server)
        other.send(text: "close")
        XCTAssertEqual(other.closeCode(), 1000)
        other.sendClose()
        XCTAssertTrue(other.isClosed())
        XCTAssertTrue(waitUntil { server.openWebSockets == 0 })
        XCTAssertEqual(echo.closedCount.load(ordering: .relaxed), 2)
    }

    func testMessagesUpToTheLimitPassAndLongerOnesClose1009() throws {
        var settings = WebSocketSettings()
        settings.maxMessageBytes = 1000
        let server = try startServer(settings: settings)
        let client = try connect(server)
        let edge = String(repeating: "a", count: 1000)
        client.send(text: edge)
        XCTAssertEqual(client.nextFrame()?.text, edge)
        // One frame past it, refused from its header.
        client.send(text: edge + "b")
        XCTAssertEqual(client.closeCode(), 1009)
        // Fragments that add up past it.
        let other = try connect(server)
        other.sendFrame(opcode: 0x1, payload: Array(edge.utf8), fin: false)
        other.sendFrame(opcode: 0x0, payload: [0x62], fin: true)
        XCTAssertEqual(other.closeCode(), 1009)
    }

    func testAConsumerThatStopsReadingIsCutWhenItsBufferIsFull() throws {
        var settings = WebSocketSettings()
        settings.outgoingBufferLimit = 64 * 1024
        let server = try startServer(settings: settings)
        let slow = try connect(server, receiveBuffer: 4096)
        // Far more than the kernel's buffers and the server's limit hold: the server gives up on the client.
        slow.send(text: "flood:4000")
        XCTAssertTrue(waitUntil { self.echo.closedCount.load(ordering: .relaxed) == 1 })
        XCTAssertEqual(server.openWebSockets, 0)
        // Within the limit, a client that reads gets everything.
        let reader = try connect(server)
        reader.send(text: "flood:32")
        for _ in 0..<32 { XCTAssertEqual(reader.nextFrame()?.payload.count, 1024) }
    }

    func testAClientSendingPingsWithoutReadingThePongsIsCut() throws {
        var settings = WebSocketSettings()
        settings.outgoingBufferLimit = 16 * 1024
        let server = try startServer(settings: settings)
        let flooder = try connect(server, receiveBuffer: 4096)
        let ping = [UInt8](repeating: 0x70, count: 125)
        // Bounded: far more pong bytes than the kernel's buffers and the server's limit hold together.
        for _ in 0..<20_000 where echo.closedCount.load(ordering: .relaxed) == 0 {
            flooder.sendFrame(opcode: 0x9, payload: ping)
        }
        XCTAssertTrue(waitUntil { self.echo.closedCount.load(ordering: .relaxed) == 1 })
    }

    func testAnIdleConnectionIsClosedAndPingsKeepItOpen() throws {
        var settings = WebSocketSettings()
        settings.idleTimeout = .seconds(1)
        let server = try startServer(settings: settings)
        let chatty = try connect(server)
        let idle = try connect(server)
        for _ in 0..<4 {
            chatty.sendFrame(opcode: 0x9, payload: [])
            XCTAssertEqual(chatty.nextFrame()?.opcode, 0xA)
            Thread.sleep(forTimeInterval: 0.4)
        }
        XCTAssertEqual(idle.closeCode(), 1001)
        chatty.send(text: "still here")
        XCTAssertEqual(chatty.nextFrame()?.text, "still here")
    }

    /// Each socket's idle deadline falls due on its own: among many, the quiet ones close and the ones heard from
    /// (each put back at its new deadline) stay open.
    func testAmongManySocketsOnlyTheQuietOnesCloseForIdleness() throws {
        var settings = WebSocketSettings()
        settings.idleTimeout = .seconds(1)
        let server = try startServer(settings: settings)
        let chatty = try (0..<20).map { _ in try connect(server) }
        let quiet = try (0..<20).map { _ in try connect(server) }
        for _ in 0..<5 {
            for client in chatty {
                client.sendFrame(opcode: 0x9, payload: [])
                XCTAssertEqual(client.nextFrame()?.opcode, 0xA)
            }
            Thread.sleep(forTimeInterval: 0.4)
        }
        for client in quiet {
            XCTAssertEqual(client.closeCode(), 1001)
            client.sendClose()
        }
        for client in chatty {
            client.send(text: "still here")
            XCTAssertEqual(client.nextFrame()?.text, "still here")
        }
        XCTAssertTrue(waitUntil { server.openWebSockets == 20 })
        XCTAssertEqual(echo.closedCount.load(ordering: .relaxed), 20)
    }

    /// The server's close frame starts the close timeout: a client that never answers it is released after it.
    func testAClientThatNeverAnswersTheServersCloseIsReleased() throws {
        var settings = WebSocketSettings()
        settings.closeTimeout = .milliseconds(500)
        let server = try startServer(settings: settings)
        let client = try connect(server)
        client.send(text: "close")
        XCTAssertEqual(client.closeCode(), 1000)
        XCTAssertTrue(waitUntil { self.echo.closedCount.load(ordering: .relaxed) == 1 })
        XCTAssertTrue(client.isClosed())
        XCTAssertEqual(server.openWebSockets, 0)
    }

    /// An upgraded socket answers to its own idle timeout, not to the HTTP ones (MHD's idle timeout, the guard's
    /// header deadline), and stays counted in the connection table.
    func testHTTPTimeoutsDoNotCloseAnUpgradedSocket() throws {
        let server = try startServer {
            $0.connectionTimeoutSeconds = 1
            $0.headerTimeout = .seconds(1)
            $0.connectionsPerAddress = 2
        }
        let client = try connect(server)
        Thread.sleep(forTimeInterval: 2.5)
        client.send(text: "after a while")
        XCTAssertEqual(client.nextFrame()?.text, "after a while")
        let second = try connect(server)
        let third = try? WebSocketTestClient(port: server.port, path: "/ws")
        XCTAssertNotEqual(third?.status, 101, "upgraded sockets count in the per-address limit")
        second.send(text: "still counted")
        XCTAssertEqual(second.nextFrame()?.text, "still counted")
    }

    func testShutdownClosesOpenConnectionsWithGoingAway() async throws {
        let server = try startServer()
        let client = try connect(server)
        // The 101 reaches the client just before the server takes the socket over.
        for _ in 0..<250 where server.openWebSockets == 0 { try await Task.sleep(for: .milliseconds(20)) }
        await server.shutdown()
        XCTAssertEqual(client.closeCode(), 1001)
    }

    private func waitUntil(_ condition: () -> Bool) -> Bool {
        for _ in 0..<250 {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }
}
