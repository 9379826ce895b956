import Foundation
import HTTPServer
import Logging
import Synchronization
import TestSupport
import XCTest

/// Streamed answers (`Response.eventStream`) over a real socket: bytes sent later reach the client, a consumer
/// that never reads is cut off once its buffer is full, and a shutdown ends open streams.
final class EventStreamTests: XCTestCase {
    /// The streams the route opened, in order.
    private final class Opened: Sendable {
        let streams = Mutex<[EventStream]>([])
    }
    private let opened = Opened()

    private func startServer(
        bufferLimit: Int = 4096, configure: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws -> HTTPServer {
        let opened = self.opened
        let routes = [
            Route(
                .get, "/events",
                handler: Handler { _ in
                    let stream = EventStream(bufferLimit: bufferLimit)
                    stream.send(ServerSentEvent.event("hello", data: "{}"))
                    opened.streams.withLock { $0.append(stream) }
                    return .eventStream(stream)
                })
        ]
        var configuration = HTTPServerConfiguration(port: 0, refusalDelay: .zero)
        configure(&configuration)
        let server = HTTPServer(
            configuration: configuration, router: Router(routes: routes), logger: Logger(label: "test"))
        try server.start()
        addTeardownBlock { await server.shutdown() }
        return server
    }

    private func waitForStream(_ index: Int) throws -> EventStream {
        for _ in 0..<200 {
            if let stream = opened.streams.withLock({ $0.count > index ? $0[index] : nil }) { return stream }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw HTTPTestError.timedOut
    }

    func testBytesSentLaterReachTheClientUntilTheStreamFinishes() throws {
        let server = try startServer()
        let client = try EventStreamTestClient(port: server.port, path: "/events", headers: [:])
        XCTAssertEqual(try client.readHead(), 200)
        XCTAssertEqual(client.header("Content-Type"), "text/event-stream; charset=utf-8")
        XCTAssertEqual(client.header("Cache-Control"), "no-store")
        XCTAssertEqual(client.next()?.name, "hello")
        let stream = try waitForStream(0)
        // Sent while the connection is parked (nothing pending): the send resumes it.
        for index in 0..<3 {
            XCTAssertTrue(stream.send(ServerSentEvent.event("tick", data: "\(index)")))
            XCTAssertEqual(client.next(), ReceivedEvent(name: "tick", data: "\(index)"))
        }
        XCTAssertTrue(stream.send(ServerSentEvent.comment("keep-alive")))
        XCTAssertEqual(client.next()?.comment, "keep-alive")
        stream.finish()
        XCTAssertTrue(client.ends())
        XCTAssertFalse(stream.send(ServerSentEvent.comment("late")))
    }

    func testAConsumerThatNeverReadsIsCutOffOnceItsBufferIsFull() throws {
        let server = try startServer(bufferLimit: 4096)
        // A small receive buffer, never read past the head: the server's side fills.
        let client = try EventStreamTestClient(port: server.port, path: "/events", headers: [:], receiveBuffer: 4096)
        XCTAssertEqual(try client.readHead(), 200)
        let stream = try waitForStream(0)
        let piece = ServerSentEvent.event("filler", data: String(repeating: "x", count: 1000))
        var refused = false
        // Bounded: the kernel's buffers on both sides and the stream's own take far less than this.
        for _ in 0..<100_000 where !refused {
            refused = !stream.send(piece)
            if !refused && stream.bufferedBytes > 0 { Thread.sleep(forTimeInterval: 0.001) }
        }
        XCTAssertTrue(refused, "the stream refused bytes past its buffer")
        XCTAssertEqual(stream.bufferedBytes, 0, "a cut-off stream holds nothing")
        XCTAssertFalse(stream.isOpen)
        // The server closes the connection and forgets the stream.
        for _ in 0..<250 where server.openStreams > 0 { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(server.openStreams, 0)
        XCTAssertTrue(client.ends())
    }

    func testAClientThatGoesAwayIsForgottenAtTheNextSend() throws {
        let server = try startServer()
        var client: EventStreamTestClient? = try EventStreamTestClient(port: server.port, path: "/events", headers: [:])
        XCTAssertEqual(try client?.readHead(), 200)
        let stream = try waitForStream(0)
        let closed = Atomic<Bool>(false)
        stream.onClose { closed.store(true, ordering: .relaxed) }
        client = nil
        // A parked connection sees the close only when it writes again (as a keep-alive does).
        for _ in 0..<250 where !closed.load(ordering: .relaxed) {
            stream.send(ServerSentEvent.comment("keep-alive"))
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertTrue(closed.load(ordering: .relaxed))
        XCTAssertEqual(server.openStreams, 0)
    }

    func testOpenStreamsAreNeitherEvictedWhenTheTableIsFullNorCutByDeadlines() throws {
        let server = try startServer {
            $0.connectionLimit = 2
            $0.headerTimeout = .milliseconds(200)
            $0.crowdedHeaderTimeout = .milliseconds(200)
            $0.bodyTimeout = .milliseconds(200)
        }
        let clients = try (0..<2).map { _ in
            let client = try EventStreamTestClient(port: server.port, path: "/events", headers: [:])
            XCTAssertEqual(try client.readHead(), 200)
            XCTAssertEqual(client.next()?.name, "hello")
            return client
        }
        // Well past every deadline, and a newcomer finds the table full of streams: it is turned away.
        Thread.sleep(forTimeInterval: 0.6)
        let newcomer = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        XCTAssertThrowsError(try newcomer.send("GET", "/events"))
        for (index, client) in clients.enumerated() {
            XCTAssertTrue(try waitForStream(index).send(ServerSentEvent.event("still", data: "\(index)")))
            XCTAssertEqual(client.next(), ReceivedEvent(name: "still", data: "\(index)"))
        }
    }

    func testShutdownEndsOpenStreams() async throws {
        let server = try startServer()
        let client = try EventStreamTestClient(port: server.port, path: "/events", headers: [:])
        XCTAssertEqual(try client.readHead(), 200)
        _ = try waitForStream(0)
        await server.shutdown()
        XCTAssertTrue(client.ends())
        XCTAssertEqual(server.openStreams, 0)
    }
}
