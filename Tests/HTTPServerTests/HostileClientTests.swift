import Foundation
import HTTPServer
import Logging
import TestSupport
import XCTest

/// Limits against clients that try to hold the server: connections per address and in all, deadlines for
/// headers and bodies, the body budget, answers decided from the headers before the body, request framing that
/// could smuggle requests, NUL in paths, strict JSON, `nosniff`. Each limit at its edge and past it.
final class HostileClientTests: XCTestCase {
    private struct Echo: Codable { var name: String; var count: Int }

    private func makeServer(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        warnings: LogCapture = LogCapture(level: .warning),
        uploads: Authentication = .none
    ) throws -> HTTPServer {
        let routes = [
            Route(.get, "/ping", handler: .immediate { _ in Response.json(bytes: Array("{\"pong\":true}".utf8)) }),
            Route(.get, "/items", handler: .immediate { _ in Response(status: 200, body: Array("list".utf8)) }),
            Route(
                .get, "/items/{id}",
                handler: .immediate { request in
                    Response(status: 200, body: Array(request.pathParameter("id").utf8))
                }),
            Route(
                .post, "/echo",
                handler: Handler { request in
                    let echo: Echo = try request.decodeJSON()
                    return try Response.json(echo, status: 201)
                }),
            Route(
                .put, "/upload", RoutePolicy(authentication: uploads).bodies(upTo: 1000),
                handler: Handler { request in
                    Response(status: 200, body: Array(String(request.body.count).utf8))
                }),
            Route(
                .post, "/login", RoutePolicy.open.bodies(upTo: RoutePolicy.credentialBodyLimit),
                handler: Handler { request in
                    Response(status: 200, body: Array(String(request.body.count).utf8))
                }),
            Route(
                .get, "/limited",
                handler: Handler { request in
                    request.headers["X-Over"] == "yes"
                        ? Response(status: 429, body: Array("over".utf8)) : Response(status: 200, body: [])
                }),
        ]
        var configuration = HTTPServerConfiguration(port: 0, connectionTimeoutSeconds: 30)
        configure(&configuration)
        let server = HTTPServer(
            configuration: configuration, router: Router(routes: routes), logger: warnings.logger())
        try server.start()
        return server
    }

    private static let ping = Array("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n".utf8)

    /// Sends `/ping` on `connection`: true when answered 200, false when the server closed without answering.
    private func pingAnswered(_ connection: HTTPTestConnection) -> Bool {
        connection.write(Self.ping)
        return (try? connection.readResponse().status) == 200
    }

    /// Waits (at most 10 s) until the server buffers `bytes` of request bodies: it reads a connection's headers in
    /// its own time.
    private func awaitBuffered(_ server: HTTPServer, _ bytes: Int) async throws {
        for _ in 0..<200 where server.bufferedBodyBytes != bytes { try await Task.sleep(for: .milliseconds(50)) }
    }

    /// Opens an upload announcing `declared` bytes and sends `sent` of them.
    private func upload(declaring declared: Int, sending sent: Int, to server: HTTPServer, from source: String? = nil)
        throws -> HTTPTestConnection
    {
        let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: source)
        connection.write(
            Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(declared)\r\n\r\n".utf8)
                + Array(repeating: 1, count: sent))
        return connection
    }

    // MARK: connections

    func testConnectionsPerAddressAtTheLimitAndPast() async throws {
        let warnings = LogCapture(level: .warning)
        let server = try makeServer({ $0.connectionsPerAddress = 4 }, warnings: warnings)
        let held = try (0..<4).map { _ in try HTTPTestConnection(port: server.port, timeoutSeconds: 3) }
        try await Task.sleep(for: .milliseconds(300))
        // At the limit: every one of the four is served.
        for connection in held { XCTAssertTrue(pingAnswered(connection)) }
        // Past it, from the same address: closed without an answer, however many times it tries.
        for _ in 0..<5 {
            let refused = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
            XCTAssertFalse(pingAnswered(refused), "a fifth connection from one address is refused")
            refused.close()
        }
        // Another address is not affected.
        let other = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.2")
        XCTAssertTrue(pingAnswered(other))
        other.close()
        // The refusals were logged once (rate-limited), not once each.
        XCTAssertEqual(warnings.all.filter { $0.contains("per-address connection limit") }.count, 1)
        // A slot freed is a slot available again.
        // (The slot is free once the server has seen the close: a few tries, at most 5 s.)
        held[0].close()
        var answered = false
        for _ in 0..<50 where !answered {
            try await Task.sleep(for: .milliseconds(100))
            let again = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
            answered = pingAnswered(again)
            again.close()
        }
        XCTAssertTrue(answered)
        for connection in held.dropFirst() { connection.close() }
        await server.shutdown()
    }

    func testConnectionLimitInAllAtTheLimitAndPast() async throws {
        let server = try makeServer {
            $0.connectionLimit = 6; $0.connectionsPerAddress = 100
        }
        let held = try (0..<6).map { index in
            try HTTPTestConnection(
                port: server.port, timeoutSeconds: 3, source: index.isMultiple(of: 2) ? "127.0.0.1" : "127.0.0.3")
        }
        try await Task.sleep(for: .milliseconds(300))
        for connection in held { XCTAssertTrue(pingAnswered(connection)) }
        let refused = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.4")
        XCTAssertFalse(pingAnswered(refused))
        refused.close()
        for connection in held { connection.close() }
        await server.shutdown()
    }

    func testNewConnectionsPerAddressAtTheRateAndPast() async throws {
        let warnings = LogCapture(level: .warning)
        // One a second, bursts of two.
        let server = try makeServer({ $0.newConnectionsPerAddressPerSecond = 1 }, warnings: warnings)
        for _ in 0..<2 {
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
            XCTAssertTrue(pingAnswered(connection), "within the burst")
            connection.close()
        }
        let past = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
        XCTAssertFalse(pingAnswered(past), "a third connection within the same second is closed at accept")
        past.close()
        let other = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.2")
        XCTAssertTrue(pingAnswered(other), "another address has its own allowance")
        other.close()
        // Keep-alive is not limited: many requests on one connection.
        try await Task.sleep(for: .milliseconds(1100))
        let kept = try HTTPTestConnection(port: server.port, timeoutSeconds: 3)
        for _ in 0..<20 {
            XCTAssertTrue(pingAnswered(kept), "a second later, one more is allowed, for as many requests as it likes")
        }
        kept.close()
        XCTAssertEqual(warnings.all.filter { $0.contains("new-connection rate") }.count, 1)
        await server.shutdown()
    }

    func testAFullTableEvictsTheOldestIdleConnectionNotOneMidRequest() async throws {
        let warnings = LogCapture(level: .warning)
        let server = try makeServer(
            {
                $0.connectionLimit = 4; $0.connectionsPerAddress = 100; $0.crowdedHeaderTimeout = .seconds(10)
            }, warnings: warnings)
        let settle = { try await Task.sleep(for: .milliseconds(300)) }
        let idleAlone = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.2")
        try await settle()
        let midRequest = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.3")
        midRequest.write(
            Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n".utf8)
                + Array(repeating: 1, count: 10))
        let served = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.3")
        XCTAssertTrue(pingAnswered(served))
        try await settle()
        let idleCrowded = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.3")
        try await settle()
        // Full: a new connection takes the slot of the idle one from the address holding the most.
        let first = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.4")
        XCTAssertTrue(pingAnswered(first))
        XCTAssertFalse(pingAnswered(idleCrowded), "evicted")
        XCTAssertTrue(midRequest.write(Array(repeating: 1, count: 90)))
        XCTAssertEqual(try midRequest.readResponse().text, "100", "a connection mid-request is not evicted")
        // Then the last idle one, from another address.
        let second = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.4")
        XCTAssertTrue(pingAnswered(second))
        XCTAssertFalse(pingAnswered(idleAlone), "evicted")
        // Every connection has sent a request: none to evict, the new one is refused.
        try await settle()
        let refused = try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.5")
        XCTAssertFalse(pingAnswered(refused))
        XCTAssertTrue(pingAnswered(served))
        XCTAssertEqual(warnings.all.filter { $0.contains("idle connections evicted") }.count, 1)
        for connection in [idleAlone, midRequest, served, idleCrowded, first, second, refused] { connection.close() }
        await server.shutdown()
    }

    func testTheHeaderDeadlineShortensWhileTheTableIsNearlyFull() async throws {
        let server = try makeServer {
            $0.connectionLimit = 8; $0.connectionsPerAddress = 100; $0.headerTimeout = .seconds(10)
            $0.crowdedHeaderTimeout = .seconds(1)
        }
        // Six of eight: three quarters, the edge; each keeps the full deadline.
        var held: [HTTPTestConnection] = []
        for _ in 0..<6 {
            held.append(try HTTPTestConnection(port: server.port, timeoutSeconds: 5))
            try await Task.sleep(for: .milliseconds(100))
        }
        // The seventh, past it: closed after the short deadline if it sends nothing.
        let crowded = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: "127.0.0.2")
        let opened = ContinuousClock.now
        XCTAssertTrue(crowded.readToEnd().isEmpty)
        XCTAssertLessThan(ContinuousClock.now - opened, .seconds(3), "closed by the short deadline")
        for connection in held { XCTAssertTrue(pingAnswered(connection), "the full deadline") }
        for connection in held + [crowded] { connection.close() }
        await server.shutdown()
    }

    func testATrustedProxyIsExemptFromThePerAddressConnectionLimits() async throws {
        let server = try makeServer {
            $0.connectionsPerAddress = 2; $0.newConnectionsPerAddressPerSecond = 1
            $0.trustedProxies = TrustedProxies(["127.0.0.5"])
        }
        let proxied = try (0..<4).map { _ in
            try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.5")
        }
        for connection in proxied { XCTAssertTrue(pingAnswered(connection), "a proxy's connections are not capped") }
        let direct = try (0..<3).map { _ in
            try HTTPTestConnection(port: server.port, timeoutSeconds: 3, source: "127.0.0.6")
        }
        XCTAssertEqual(direct.map(pingAnswered), [true, true, false], "anyone else's are")
        for connection in proxied + direct { connection.close() }
        await server.shutdown()
    }

    func testDefaultConnectionLimitIsSizedToMemoryAndFiles() {
        let limit = HTTPServerConfiguration.memorySizedConnectionLimit(connectionMemoryLimit: 32 * 1024)
        XCTAssertTrue((256...4096).contains(limit))
        let physical = Int(ProcessInfo.processInfo.physicalMemory)
        XCTAssertLessThanOrEqual(limit * 32 * 1024, max(physical / 32, 256 * 32 * 1024))
        XCTAssertEqual(HTTPServerConfiguration(port: 0).connectionLimit, limit)
    }

    // MARK: deadlines

    func testHeadersTrickledInPastTheirDeadlineCloseTheConnection() async throws {
        let server = try makeServer { $0.headerTimeout = .seconds(1) }
        // Within the deadline (half of it), even byte by byte: served.
        let quick = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        for chunk in [Array(Self.ping.prefix(10)), Array(Self.ping.dropFirst(10))] {
            quick.write(chunk)
            try await Task.sleep(for: .milliseconds(250))
        }
        XCTAssertEqual(try quick.readResponse().status, 200)
        quick.close()
        // A byte every 300 ms never finishes the headers; every byte arrives well within the idle timeout, but the
        // deadline is counted from the start: the server closes the connection within a few seconds.
        let slow = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        let started = ContinuousClock.now
        var open = true
        for byte in Array("GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
            + Array(repeating: UInt8(ascii: "a"), count: 20)
        {
            if !slow.write([byte]) { open = false; break }
            try await Task.sleep(for: .milliseconds(300))
            if ContinuousClock.now - started > .seconds(6) { break }
        }
        // Closed by the server: the read ends at once (end of stream), not after the client's 5 s read timeout.
        let reading = ContinuousClock.now
        let answer = slow.readToEnd()
        XCTAssertTrue(answer.isEmpty, "no answer to a request whose headers never completed")
        XCTAssertTrue(!open || ContinuousClock.now - reading < .seconds(2), "the server closed the connection")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(8))
        slow.close()
        await server.shutdown()
    }

    func testBodyTrickledInPastItsDeadlineClosesTheConnection() async throws {
        let server = try makeServer { $0.bodyTimeout = .seconds(1) }
        let head = Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n".utf8)
        // The whole body within the deadline: served.
        let quick = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        quick.write(head + Array(repeating: UInt8(ascii: "b"), count: 20))
        try await Task.sleep(for: .milliseconds(400))
        quick.write(Array(repeating: UInt8(ascii: "b"), count: 20))
        let served = try quick.readResponse()
        XCTAssertEqual(served.status, 200)
        XCTAssertEqual(served.text, "40")
        quick.close()
        // One byte every 300 ms: the deadline is not reset by each byte.
        let slow = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        slow.write(head)
        let started = ContinuousClock.now
        var closed = false
        for _ in 0..<39 {
            try await Task.sleep(for: .milliseconds(300))
            if !slow.write([UInt8(ascii: "b")]) { closed = true; break }
        }
        let answer = slow.readToEnd()
        XCTAssertTrue(closed || answer.isEmpty, "the upload was cut off, not answered")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(14))
        slow.close()
        XCTAssertEqual(server.bufferedBodyBytes, 0, "the cut-off body's bytes are released")
        await server.shutdown()
    }

    // MARK: answers from the headers, before the body

    func testUnknownRouteWrongMethodAndOversizedBodyAreAnsweredBeforeTheBody() async throws {
        let server = try makeServer()
        let cases: [(head: String, status: Int)] = [
            ("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n", 404),
            ("POST /ping HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n", 405),
            ("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", 413),
        ]
        for (head, status) in cases {
            // Only the headers are sent: the answer must not wait for a body that never comes.
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
            connection.write(Array(head.utf8))
            let response = try connection.readResponse()
            XCTAssertEqual(response.status, status, head)
            connection.close()
        }
        // At the limit: 1000 bytes are read and served.
        let atLimit = try HTTPTestClient(port: server.port).send(
            "PUT", "/upload", body: Array(repeating: 1, count: 1000))
        XCTAssertEqual(atLimit.status, 200)
        await server.shutdown()
    }

    // MARK: refusals a flood earns

    /// Sends `head` on its own connection, read on a thread of its own (a blocking read must not hold one of the
    /// few threads tasks run on); the answer's status and when it arrived.
    private func answered(_ head: String, port: Int) -> Task<(status: Int, at: ContinuousClock.Instant), any Error> {
        Task {
            try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            let connection = try HTTPTestConnection(port: port, timeoutSeconds: 15)
                            defer { connection.close() }
                            connection.write(Array(head.utf8))
                            let status = try connection.readResponse().status
                            return (status, ContinuousClock.now)
                        })
                }
            }
        }
    }

    /// Past a limit (a `413` decided from the headers, a handler's `429`) the answer waits `refusalDelay`; at the
    /// limit and below it requests are answered meanwhile, before the refusals.
    func testRefusalsPastALimitWaitTheDelayAndOthersDoNot() async throws {
        let delay = Duration.seconds(2)
        let server = try makeServer { $0.refusalDelay = delay }
        let started = ContinuousClock.now
        let oversized = answered("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", port: server.port)
        let over = answered("GET /limited HTTP/1.1\r\nHost: x\r\nX-Over: yes\r\n\r\n", port: server.port)
        try await Task.sleep(for: .milliseconds(200))
        let atLimit = answered(
            "PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "a", count: 1000),
            port: server.port)
        let under = answered("GET /limited HTTP/1.1\r\nHost: x\r\n\r\n", port: server.port)
        let (refused413, refused429, served1000, served) = try await (
            oversized.value, over.value, atLimit.value, under.value
        )
        XCTAssertEqual([refused413.status, refused429.status, served1000.status, served.status], [413, 429, 200, 200])
        for refusal in [refused413, refused429] {
            XCTAssertGreaterThanOrEqual(refusal.at - started, delay, "a refusal waits the delay")
            XCTAssertLessThan(served1000.at, refusal.at, "requests within the limits do not wait behind refusals")
            XCTAssertLessThan(served.at, refusal.at, "requests within the limits do not wait behind refusals")
        }
        await server.shutdown()
    }

    func testNoRefusalDelayAnswersAtOnce() async throws {
        let server = try makeServer { $0.refusalDelay = .zero }
        let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        connection.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n".utf8))
        XCTAssertEqual(try connection.readResponse().status, 413)
        connection.close()
        XCTAssertEqual(try HTTPTestClient(port: server.port).get("/limited", headers: ["X-Over": "yes"]).status, 429)
        await server.shutdown()
    }

    func testTheRoutesAuthenticationRefusesFromTheHeadersBeforeTheBody() async throws {
        let server = try makeServer(
            uploads: Authentication(name: "x_key") { request in
                guard request.headers["X-Key"] == "open sesame" else { throw HTTPError.unauthorized() }
                return Verified(mayStreamLargeBodies: true)
            })
        let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        connection.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8))
        let refused = try connection.readResponse()
        XCTAssertEqual(refused.status, 401, "refused without waiting for the 1000 bytes")
        connection.close()
        let admitted = try HTTPTestClient(port: server.port).send(
            "PUT", "/upload", headers: ["X-Key": "open sesame"], body: Array(repeating: 1, count: 1000))
        XCTAssertEqual(admitted.status, 200)
        XCTAssertEqual(admitted.text, "1000")
        XCTAssertEqual(
            try HTTPTestClient(port: server.port).get("/ping").status, 200, "requests without a body are not asked")
        await server.shutdown()
    }

    func testBodyBudgetInAllAndPerAddressAtTheLimitAndPast() async throws {
        let server = try makeServer {
            $0.bodyBudget = 300; $0.bodyBudgetPerAddress = 100; $0.connectionBodyAllowance = 0
        }
        // 80 bytes sent and held (of 90 announced) from 127.0.0.1: bodies are counted by the bytes received.
        let stalled = try upload(declaring: 90, sending: 80, to: server)
        try await awaitBuffered(server, 80)
        XCTAssertEqual(server.bufferedBodyBytes, 80)
        // The same address: 20 more fit its share exactly, 21 do not.
        let atEdge = try HTTPTestClient(port: server.port).send("PUT", "/upload", body: Array(repeating: 1, count: 20))
        XCTAssertEqual(atEdge.status, 200)
        let past = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        past.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 21\r\n\r\n".utf8))
        let refused = try past.readResponse()
        XCTAssertEqual(refused.status, 503)
        XCTAssertNotNil(refused.header("Retry-After"))
        past.close()
        // Other addresses have their own share, up to the budget in all.
        var others: [HTTPTestConnection] = []
        for source in ["127.0.0.2", "127.0.0.3"] {
            others.append(try upload(declaring: 100, sending: 99, to: server, from: source))
        }
        try await awaitBuffered(server, 278)
        XCTAssertEqual(server.bufferedBodyBytes, 278)
        let overall = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: "127.0.0.4")
        overall.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 23\r\n\r\n".utf8))
        XCTAssertEqual(try overall.readResponse().status, 503, "278 + 23 is past the budget of 300")
        overall.close()
        let fits = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: "127.0.0.4")
        fits.write(
            Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 22\r\n\r\n".utf8) + Array(repeating: 1, count: 22)
        )
        XCTAssertEqual(try fits.readResponse().status, 200, "278 + 22 is exactly the budget")
        fits.close()
        // Released when the connections go.
        stalled.close()
        for other in others { other.close() }
        try await awaitBuffered(server, 0)
        XCTAssertEqual(server.bufferedBodyBytes, 0)
        await server.shutdown()
    }

    func testChunkedBodiesCountAgainstTheBudgetAsTheyArrive() async throws {
        let server = try makeServer {
            $0.bodyBudget = 1000; $0.bodyBudgetPerAddress = 50; $0.connectionBodyAllowance = 0
        }
        let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        let chunk = "3c\r\n" + String(repeating: "c", count: 60) + "\r\n0\r\n\r\n"
        connection.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\(chunk)".utf8))
        XCTAssertEqual(try connection.readResponse().status, 503, "60 chunked bytes are past a share of 50")
        connection.close()
        let small = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        small.write(
            Array(
                ("PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "32\r\n\(String(repeating: "c", count: 50))\r\n0\r\n\r\n")
                    .utf8))
        let response = try small.readResponse()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "50")
        small.close()
        await server.shutdown()
    }

    func testATricklerHoldsOnlyTheBytesItHasSent() async throws {
        let server = try makeServer {
            $0.bodyBudget = 1000; $0.bodyBudgetPerAddress = 100; $0.connectionBodyAllowance = 0
        }
        // 90 bytes announced, 10 sent: 10 held, growing as the rest arrives.
        let trickler = try upload(declaring: 90, sending: 10, to: server)
        try await awaitBuffered(server, 10)
        XCTAssertEqual(server.bufferedBodyBytes, 10)
        trickler.write(Array(repeating: 1, count: 30))
        try await awaitBuffered(server, 40)
        XCTAssertEqual(server.bufferedBodyBytes, 40)
        // The same address may still send what fits beside what it holds: 60 at the edge, 61 past it.
        let edge = try HTTPTestClient(port: server.port).send("PUT", "/upload", body: Array(repeating: 1, count: 60))
        XCTAssertEqual(edge.status, 200)
        let past = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        past.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 61\r\n\r\n".utf8))
        XCTAssertEqual(try past.readResponse().status, 503)
        past.close()
        trickler.write(Array(repeating: 1, count: 50))
        XCTAssertEqual(try trickler.readResponse().text, "90")
        trickler.close()
        try await awaitBuffered(server, 0)
        XCTAssertEqual(server.bufferedBodyBytes, 0)
        await server.shutdown()
    }

    /// Credential-sized bodies are held within their connection's allowance: however many addresses hold such
    /// bodies, and whatever the budget, a login is read and served.
    func testCredentialBodiesAreHeldWithinTheirConnection() async throws {
        let server = try makeServer {
            $0.bodyBudget = 100; $0.bodyBudgetPerAddress = 50; $0.refusalDelay = .zero
        }
        let limit = RoutePolicy.credentialBodyLimit
        var tricklers: [HTTPTestConnection] = []
        for source in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
            for _ in 0..<3 {
                let trickler = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: source)
                trickler.write(
                    Array("POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: \(limit)\r\n\r\n".utf8)
                        + Array(repeating: 1, count: 1000))
                tricklers.append(trickler)
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertEqual(server.bufferedBodyBytes, 0, "not drawn from the budget")
        let atLimit = try HTTPTestClient(port: server.port).send(
            "POST", "/login", body: Array(repeating: 1, count: limit))
        XCTAssertEqual(atLimit.status, 200)
        XCTAssertEqual(atLimit.text, String(limit))
        let past = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        past.write(Array("POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: \(limit + 1)\r\n\r\n".utf8))
        XCTAssertEqual(try past.readResponse().status, 413, "refused from the headers")
        past.close()
        for trickler in tricklers { trickler.close() }
        await server.shutdown()
    }

    /// A chunked body declares no length: it is answered `413` as soon as it passes the limit, while the client
    /// is still sending, and the client reads the answer.
    func testALargeChunkedBodyIsAnswered413AndTheClientReadsIt() async throws {
        let server = try makeServer()
        for size in [1001, 1_536 << 10] {
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
            let head = "PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            connection.write(
                Array((head + String(size, radix: 16) + "\r\n").utf8) + Array(repeating: UInt8(ascii: "a"), count: size)
                    + Array("\r\n0\r\n\r\n".utf8))
            let response = try connection.readResponse()
            XCTAssertEqual(response.status, 413, "\(size) bytes")
            XCTAssertEqual(try response.jsonObject()["code"] as? String, "payload_too_large")
            XCTAssertNotNil(response.header("X-Request-Id"))
            connection.close()
        }
        await server.shutdown()
    }

    /// After an answer decided before the body was read, the server stops writing but keeps reading for a while
    /// (a lingering close): a client still sending its body is not reset, reads the whole answer, and the
    /// connection closes within the lingering time.
    func testALingeringCloseLetsAClientStillSendingReadTheAnswer() async throws {
        let server = try makeServer { $0.refusalDelay = .zero }
        let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        connection.write(
            Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n".utf8)
                + Array(repeating: 1, count: 4096))
        let refused = try connection.readResponse()
        XCTAssertEqual(refused.status, 413)
        XCTAssertEqual(try refused.jsonObject()["code"] as? String, "payload_too_large")
        // Still sending after the answer: read and discarded, no reset.
        let closedAt = ContinuousClock.now
        for _ in 0..<8 {
            XCTAssertTrue(connection.write(Array(repeating: 1, count: 8192)), "the server still reads")
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertEqual(server.lingeringConnections, 1)
        // Past the lingering time the connection is closed: writes fail.
        var open = true
        while open, ContinuousClock.now - closedAt < .seconds(6) {
            try await Task.sleep(for: .milliseconds(100))
            open = connection.write(Array(repeating: 1, count: 1024))
        }
        XCTAssertFalse(open, "closed once the lingering is over")
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - closedAt, .milliseconds(1500))
        XCTAssertEqual(server.lingeringConnections, 0)
        connection.close()
        await server.shutdown()
    }

    // MARK: framing

    func testConflictingLengthsAreRefused() async throws {
        let server = try makeServer()
        let heads = [
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        ]
        for head in heads {
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
            connection.write(Array(head.utf8))
            let response = try connection.readResponse()
            XCTAssertEqual(response.status, 400, head)
            XCTAssertEqual(try response.jsonObject()["code"] as? String, "bad_request")
            connection.close()
        }
        // One Content-Length alone is fine.
        let fine = try HTTPTestClient(port: server.port).send(
            "POST", "/echo", headers: ["Content-Type": "application/json"], body: Array(#"{"name":"a","count":1}"#.utf8)
        )
        XCTAssertEqual(fine.status, 201)
        await server.shutdown()
    }

    func testNULInThePathNeverReachesAnotherRoute() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        XCTAssertEqual(try client.get("/items/%00").status, 404, "not the list at /items")
        XCTAssertEqual(try client.get("/items/%00abc").status, 404)
        XCTAssertEqual(try client.get("/ping%00").status, 404)
        XCTAssertEqual(try client.get("/items/a%2500").text, "a%00", "an encoded percent sign is no NUL")
        XCTAssertEqual(try client.get("/items?q=%00").status, 422, "a NUL in the query is refused as before")
        await server.shutdown()
    }

    // MARK: strict JSON

    func testRequestJSONIsStrict() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        let invalid = [
            #"{"name": "a", "count": 1,}"#, #"{"name": "a", "count": [1,]}"#, #"{'name': "a", "count": 1}"#,
            #"{"name": "a", "count": 01}"#, #"{"name": "a", "count": NaN}"#, #"{"name": "a", "count": 1} x"#,
            #"{"name": "a", "count": 1"#, #"{"name": "a\x", "count": 1}"#, "{\"name\": \"a\tb\", \"count\": 1}",
            #"{"name": "a", "count": .5}"#, #"{"name": "a", "count": 1.}"#, #"{"name": "a" "count": 1}"#,
            #"{name: "a", "count": 1}"#, #"{"name": "a", "count": +1}"#, #"[1,,2]"#,
            #"/* c */ {"name": "a", "count": 1}"#,
        ]
        for text in invalid {
            let response = try client.send(
                "POST", "/echo", headers: ["Content-Type": "application/json"], body: Array(text.utf8))
            XCTAssertEqual(response.status, 400, text)
            XCTAssertEqual(try response.jsonObject()["code"] as? String, "invalid_json", text)
        }
        var invalidUTF8 = Array(#"{"name": "a"#.utf8)
        invalidUTF8 += [0xC0, 0xAF]
        invalidUTF8 += Array(#"", "count": 1}"#.utf8)
        XCTAssertEqual(
            try client.send("POST", "/echo", headers: ["Content-Type": "application/json"], body: invalidUTF8).status,
            400)
        let valid = [
            #"{"name": "a", "count": 1}"#, " \n{\"name\":\"\\u00e9\\n\\\"\",\"count\":-0}\r\n",
            #"{"name": "ü€𝄞", "count": 1e2, "x": [true, false, null, {}, [], 1.5E-3]}"#,
        ]
        for text in valid {
            let response = try client.send(
                "POST", "/echo", headers: ["Content-Type": "application/json"], body: Array(text.utf8))
            XCTAssertEqual(response.status, 201, text)
        }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let response = try client.send(
            "POST", "/echo", headers: ["Content-Type": "application/json"], body: Array(deep.utf8))
        XCTAssertEqual(response.status, 400, "nesting past 512 is refused")
        await server.shutdown()
    }

    // MARK: headers

    func testEveryResponseSaysNosniff() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        for response in [
            try client.get("/ping"), try client.get("/nowhere"), try client.send("DELETE", "/ping"),
            try client.send("POST", "/echo", headers: ["Content-Type": "application/json"], body: Array("{,}".utf8)),
        ] {
            XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff", "status \(response.status)")
        }
        await server.shutdown()
    }
}
