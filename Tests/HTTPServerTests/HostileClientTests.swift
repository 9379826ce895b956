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
                .put, "/upload", RoutePolicy(authentication: uploads, bodyLimit: 1000),
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
            $0.bodyBudget = 300; $0.bodyBudgetPerAddress = 100
        }
        // 80 bytes announced and held (never sent) from 127.0.0.1.
        let stalled = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
        stalled.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 80\r\n\r\n".utf8))
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
            let other = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: source)
            other.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n".utf8))
            others.append(other)
        }
        try await awaitBuffered(server, 280)
        XCTAssertEqual(server.bufferedBodyBytes, 280)
        let overall = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: "127.0.0.4")
        overall.write(Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 21\r\n\r\n".utf8))
        XCTAssertEqual(try overall.readResponse().status, 503, "280 + 21 is past the budget of 300")
        overall.close()
        let fits = try HTTPTestConnection(port: server.port, timeoutSeconds: 5, source: "127.0.0.4")
        fits.write(
            Array("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n".utf8) + Array(repeating: 1, count: 20)
        )
        XCTAssertEqual(try fits.readResponse().status, 200, "280 + 20 is exactly the budget")
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
            $0.bodyBudget = 1000; $0.bodyBudgetPerAddress = 50
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
