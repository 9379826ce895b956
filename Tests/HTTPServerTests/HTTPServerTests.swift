import Failures
import Foundation
import HTTPServer
import Logging
import TestSupport
import XCTest

/// The HTTP layer over a real socket: routing, errors, limits, malformed input and shutdown.
final class HTTPServerTests: XCTestCase {
    private struct Echo: Codable { var name: String; var count: Int }

    private func makeServer(gracePeriod: Duration = .seconds(10)) throws -> HTTPServer {
        let routes = [
            Route(.get, "/ping", handler: .immediate { _ in Response.json(bytes: Array("{\"pong\":true}".utf8)) }),
            Route(
                .get, "/items/{id}",
                handler: Handler { request in
                    try Response.json(["id": request.pathParameter("id"), "q": request.queryValue("q") ?? ""])
                }),
            Route(
                .get, "/items/special",
                handler: .immediate { _ in Response(status: 200, body: Array("special".utf8)) }),
            Route(
                .post, "/echo",
                handler: Handler { request in
                    let echo: Echo = try request.decodeJSON()
                    return try Response.json(echo, status: 201)
                }),
            Route(.delete, "/echo", handler: Handler { _ in .noContent }),
            Route(
                .put, "/small", RoutePolicy.open.bodies(upTo: 16),
                handler: Handler { request in Response(status: 200, body: request.body) }),
            Route(
                .get, "/slow",
                handler: Handler { _ in
                    try await Task.sleep(for: .milliseconds(500))
                    return Response(status: 200, body: Array("done".utf8))
                }),
            Route(.get, "/fail", handler: Handler { _ in throw CancellationError() }),
            Route(
                .get, "/whoami",
                handler: .immediate { request in Response(status: 200, body: Array(request.clientAddress.utf8)) }),
        ]
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(
                port: 0, connectionTimeoutSeconds: 3, shutdownGracePeriod: gracePeriod),
            router: Router(routes: routes), logger: logger)
        try server.start()
        return server
    }

    func testRoutesWithPathParametersAndQuery() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        let response = try client.get("/items/abc?q=hello%20world")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "application/json; charset=utf-8")
        XCTAssertEqual(try response.jsonObject()["id"] as? String, "abc")
        XCTAssertEqual(try response.jsonObject()["q"] as? String, "hello world")
        XCTAssertEqual(try client.get("/items/special").text, "special", "a literal segment wins over a parameter")
        await server.shutdown()
    }

    func testRequestsKnowTheClientsAddress() async throws {
        let server = try makeServer()
        XCTAssertEqual(try HTTPTestClient(port: server.port).get("/whoami").text, "127.0.0.1")
        await server.shutdown()
    }

    func testUnknownRouteIs404ProblemJSON() async throws {
        let server = try makeServer()
        let response = try HTTPTestClient(port: server.port).get("/nope")
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(response.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(try response.jsonObject()["code"] as? String, "not_found")
        XCTAssertEqual(try response.jsonObject()["status"] as? Int, 404)
        await server.shutdown()
    }

    func testWrongMethodIs405WithAllow() async throws {
        let server = try makeServer()
        let response = try HTTPTestClient(port: server.port).send("PATCH", "/echo")
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(response.header("Allow"), "POST, DELETE")
        XCTAssertEqual(try response.jsonObject()["code"] as? String, "method_not_allowed")
        await server.shutdown()
    }

    func testRequestIDIsEchoedWhenSafeAndGeneratedOtherwise() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        XCTAssertEqual(
            try client.get("/ping", headers: ["X-Request-Id": "abc.DEF_1-2"]).header("X-Request-Id"), "abc.DEF_1-2")
        let generated = try client.get("/ping", headers: ["X-Request-Id": "bad id!"]).header("X-Request-Id")
        XCTAssertNotNil(generated)
        XCTAssertNotEqual(generated, "bad id!")
        let tooLong = String(repeating: "a", count: 129)
        XCTAssertNotEqual(try client.get("/ping", headers: ["X-Request-Id": tooLong]).header("X-Request-Id"), tooLong)
        let other = try client.get("/items/1").header("X-Request-Id")
        XCTAssertNotEqual(generated, other)
        await server.shutdown()
    }

    func testJSONBodyErrors() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        let ok = try client.send("POST", "/echo", json: ["name": "a", "count": 2, "unknown": true])
        XCTAssertEqual(ok.status, 201)
        XCTAssertEqual(try ok.jsonObject()["count"] as? Int, 2)

        let invalid = try client.send(
            "POST", "/echo", headers: ["Content-Type": "application/json"], body: Array("{nope".utf8))
        XCTAssertEqual(invalid.status, 400)
        XCTAssertEqual(try invalid.jsonObject()["code"] as? String, "invalid_json")

        let wrongType = try client.send("POST", "/echo", json: ["name": "a", "count": "two"])
        XCTAssertEqual(wrongType.status, 422)
        let errors = try wrongType.jsonObject()["errors"] as? [[String: Any]]
        XCTAssertEqual(errors?.first?["field"] as? String, "count")

        let missing = try client.send("POST", "/echo", json: ["name": "a"])
        XCTAssertEqual(missing.status, 422)
        XCTAssertEqual((try missing.jsonObject()["errors"] as? [[String: Any]])?.first?["field"] as? String, "count")

        let text = try client.send("POST", "/echo", headers: ["Content-Type": "text/plain"], body: Array("hi".utf8))
        XCTAssertEqual(text.status, 415)
        XCTAssertEqual(try text.jsonObject()["code"] as? String, "unsupported_media_type")
        await server.shutdown()
    }

    func testNULCharactersAreRefusedNotCutShort() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        // libpq and every C API would stop at the NUL, silently changing the value: refuse it instead.
        let query = try client.get("/items/1?q=ab%00cd")
        XCTAssertEqual(query.status, 422)
        XCTAssertEqual((try query.jsonObject()["errors"] as? [[String: Any]])?.first?["field"] as? String, "q")
        XCTAssertEqual(try client.get("/items/1?q=ab%01cd").status, 200, "other control characters pass through")
        let json = #"{"name":"a\u0000b","count":1}"#
        let body = try client.send(
            "POST", "/echo", headers: ["Content-Type": "application/json"], body: Array(json.utf8))
        XCTAssertEqual(body.status, 400)
        XCTAssertEqual(try body.jsonObject()["code"] as? String, "invalid_json")
        // An escaped backslash followed by "u0000" is ordinary text.
        let literal = #"{"name":"a\\u0000b","count":1}"#
        let accepted = try client.send(
            "POST", "/echo", headers: ["Content-Type": "application/json"], body: Array(literal.utf8))
        XCTAssertEqual(accepted.status, 201)
        XCTAssertEqual(try accepted.jsonObject()["name"] as? String, #"a\u0000b"#)
        await server.shutdown()
    }

    func testBodyOverTheRouteLimitIs413() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        XCTAssertEqual(try client.send("PUT", "/small", body: Array(repeating: 65, count: 16)).status, 200)
        let declared = try client.send("PUT", "/small", body: Array(repeating: 65, count: 17))
        XCTAssertEqual(declared.status, 413)
        XCTAssertEqual(try declared.jsonObject()["code"] as? String, "payload_too_large")
        // A chunked body declares no length: refused while it is read.
        let connection = try HTTPTestConnection(port: server.port)
        defer { connection.close() }
        connection.write(
            Array("PUT /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n".utf8)
                + Array(repeating: 66, count: 32) + Array("\r\n0\r\n\r\n".utf8))
        XCTAssertEqual(try connection.readResponse().status, 413)
        // The default 1 MiB limit applies to JSON routes.
        let big = try client.send(
            "POST", "/echo", headers: ["Content-Type": "application/json"],
            body: Array(repeating: 32, count: (1 << 20) + 1))
        XCTAssertEqual(big.status, 413)
        await server.shutdown()
    }

    func testKeepAliveServesSeveralRequestsOnOneConnection() async throws {
        let server = try makeServer()
        let connection = try HTTPTestConnection(port: server.port)
        defer { connection.close() }
        for index in 0..<5 {
            let response = try connection.send("GET", "/items/\(index)")
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(try response.jsonObject()["id"] as? String, "\(index)")
            XCTAssertNotEqual(response.header("Connection")?.lowercased(), "close")
        }
        await server.shutdown()
    }

    func testThrownErrorBecomes500WithoutDetails() async throws {
        let server = try makeServer()
        let response = try HTTPTestClient(port: server.port).get("/fail")
        XCTAssertEqual(response.status, 500)
        XCTAssertEqual(try response.jsonObject()["code"] as? String, "internal")
        XCTAssertFalse(response.text.contains("CancellationError"))
        await server.shutdown()
    }

    /// A surface's own error answered with a client status (as PostgREST's 400) is not logged as a failed request;
    /// an error nothing knows, answered 500, is, once.
    func testOnlyABugIsLoggedAsAFailedRequest() async throws {
        struct Teapot: Error {}
        struct TeapotDialect: ErrorDialect {
            func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response {
                thrown is Teapot
                    ? Response(status: 418, body: Array("teapot".utf8))
                    : ProblemJSON().render(failure, thrown: thrown, for: request)
            }
        }
        struct Unknown: Error {}
        let policy = RoutePolicy(dialect: TeapotDialect())
        let routes = [
            Route(.get, "/teapot", policy, handler: Handler { _ in throw Teapot() }),
            Route(.get, "/bug", policy, handler: Handler { _ in throw Unknown() }),
        ]
        let logs = LogCapture(level: .error)
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0), router: Router(routes: routes), logger: logs.logger())
        try server.start()
        let client = HTTPTestClient(port: server.port)
        for _ in 1...3 { XCTAssertEqual(try client.get("/teapot").status, 418) }
        XCTAssertEqual(logs.all.filter { $0 == "request failed" }.count, 0, "\(logs.all)")
        XCTAssertEqual(try client.get("/bug").status, 500)
        XCTAssertEqual(logs.all.filter { $0 == "request failed" }.count, 1, "\(logs.all)")
        await server.shutdown()
    }

    func testMalformedRequestsNeverReachRoutesAndDoNotStopTheServer() async throws {
        let server = try makeServer()
        let garbage: [[UInt8]] = [
            Array("GARBAGE\r\n\r\n".utf8),
            Array("GET / HTTP/9.9\r\n\r\n".utf8),
            Array("\u{01}\u{02}\u{03}\r\n\r\n".utf8),
            Array("GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "h", count: 100_000))\r\n\r\n".utf8),
            Array("GET /ping HTTP/1.1\r\nBad Header Without Colon\r\n\r\n".utf8),
            Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".utf8),
        ]
        for bytes in garbage {
            let connection = try HTTPTestConnection(port: server.port, timeoutSeconds: 5)
            connection.write(bytes)
            let answer = String(decoding: connection.readToEnd(), as: UTF8.self)
            connection.close()
            if !answer.isEmpty {
                let status = Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
                XCTAssertTrue((400..<500).contains(status) || status == 505, "unexpected answer: \(answer.prefix(80))")
            }
        }
        XCTAssertEqual(try HTTPTestClient(port: server.port).get("/ping").status, 200)
        await server.shutdown()
    }

    func testBodyShorterThanContentLengthDoesNotBlockOthers() async throws {
        let server = try makeServer()
        let stalled = try HTTPTestConnection(port: server.port)
        defer { stalled.close() }
        stalled.write(
            Array(
                "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"na"
                    .utf8))
        for _ in 0..<10 {
            XCTAssertEqual(try HTTPTestClient(port: server.port).get("/ping").status, 200)
        }
        await server.shutdown()
    }

    func testSlowClientDoesNotStopOthers() async throws {
        let server = try makeServer()
        let slow = try HTTPTestConnection(port: server.port)
        defer { slow.close() }
        let request = Array("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        // One byte every 100 ms for the first part of the request, while others are served normally.
        for byte in request.prefix(12) {
            slow.write([byte])
            XCTAssertEqual(try HTTPTestClient(port: server.port).get("/ping").status, 200)
            try await Task.sleep(for: .milliseconds(100))
        }
        slow.write(Array(request.dropFirst(12)))
        XCTAssertEqual(try slow.readResponse().status, 200)
        await server.shutdown()
    }

    func testConcurrentDeferredRequests() async throws {
        let server = try makeServer()
        let port = server.port
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask { try HTTPTestClient(port: port).get("/items/\(index)").status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses, Array(repeating: 200, count: 50))
        await server.shutdown()
    }

    func testShutdownFinishesRequestsInFlight() async throws {
        let server = try makeServer()
        let port = server.port
        let inFlight = Task.detached { try HTTPTestClient(port: port).get("/slow") }
        while server.inFlightCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        await server.shutdown()
        let response = try await inFlight.value
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.text, "done")
        XCTAssertThrowsError(try HTTPTestClient(port: port).get("/ping"), "no longer accepting")
    }

    func testShutdownAnswers503WhenGracePeriodEnds() async throws {
        let server = try makeServer(gracePeriod: .milliseconds(100))
        let port = server.port
        let inFlight = Task.detached { try HTTPTestClient(port: port).get("/slow") }
        while server.inFlightCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        await server.shutdown()
        let response = try await inFlight.value
        XCTAssertEqual(response.status, 503)
    }
}
