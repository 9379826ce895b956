import Foundation
import HTTPServer
import Logging
import TestSupport
import XCTest

/// Bounded fuzzing of request handling over a real socket: mutated and random requests never crash the server,
/// never get a 5xx, never leave it unable to serve the next client. The seed is printed with any failure.
final class HTTPFuzzTests: XCTestCase {
    private struct Echo: Codable { var name: String; var count: Int }

    /// Valid requests the mutations start from: routing, path parameters, query strings, JSON bodies, limits.
    private static let seeds: [String] = [
        "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /items/42?q=a%20b&q=c HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 25\r\n\r\n"
            + "{\"name\":\"n\",\"count\":12}  ",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\n{\"nam\r\n0\r\n\r\n",
        "PUT /small HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd",
        "DELETE /echo HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc-123\r\nAuthorization: Bearer a.b.c\r\n\r\n",
    ]

    /// Bytes that tend to matter to parsers.
    private static let interesting: [[UInt8]] = [
        [0], [13], [10], [13, 10], Array(" ".utf8), Array(":".utf8), Array("%".utf8), Array("%00".utf8),
        Array("%zz".utf8),
        Array("/..".utf8), Array("?".utf8), Array("&".utf8), Array("=".utf8), Array("{".utf8), Array("\"".utf8),
        Array("\u{FEFF}".utf8), [0xFF, 0xFE], Array("9999999999999999999999".utf8), Array("-1".utf8),
        Array("Content-Length: 7\r\n".utf8), Array("Transfer-Encoding: chunked\r\n".utf8),
        Array("Expect: 100-continue\r\n".utf8),
    ]

    private func makeServer() throws -> HTTPServer {
        let routes = [
            Route(.get, "/ping", handler: .immediate { _ in Response.json(bytes: Array("{\"pong\":true}".utf8)) }),
            Route(
                .get, "/items/{id}",
                handler: Handler { request in
                    try Response.json(["id": request.pathParameter("id"), "q": request.queryValue("q") ?? ""])
                }),
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
        ]
        var logger = Logger(label: "fuzz")
        logger.logLevel = .critical
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0, connectionTimeoutSeconds: 1),
            router: Router(routes: routes), logger: logger)
        try server.start()
        return server
    }

    func testMutatedRequestsNeverCrashOrFailTheServer() async throws {
        let server = try makeServer()
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let requests = (0..<400).map { Self.mutate(Array(Self.seeds[$0 % Self.seeds.count].utf8), using: &rng) }
        try assertServed(requests, by: server, seed: seed)
        let echo = try HTTPTestClient(port: server.port).send("POST", "/echo", json: ["name": "after", "count": 1])
        XCTAssertEqual(echo.status, 201, "seed \(seed)")
        await server.shutdown()
    }

    func testRandomBytesNeverCrashOrFailTheServer() async throws {
        let server = try makeServer()
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let requests = (0..<200).map { round in
            let bytes = (0..<Int.random(in: 1...2_000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Half start like a request so the parser gets past the method.
            return round % 2 == 0 ? Array("GET /".utf8) + bytes : bytes
        }
        try assertServed(requests, by: server, seed: seed)
        await server.shutdown()
    }

    /// Sends the requests in batches of parallel connections (an incomplete request is only dropped at the
    /// connection timeout, so one at a time would take minutes); after each batch a well-formed client must
    /// still be served.
    private func assertServed(_ requests: [[UInt8]], by server: HTTPServer, seed: UInt64) throws {
        let batchSize = 50
        for batchStart in stride(from: 0, to: requests.count, by: batchSize) {
            let batch = Array(requests[batchStart..<min(requests.count, batchStart + batchSize)].enumerated())
            let connections = try batch.map { _ in try HTTPTestConnection(port: server.port, timeoutSeconds: 5) }
            for ((_, request), connection) in zip(batch, connections) {
                connection.write(request)
                connection.finishWriting()
            }
            for ((offset, request), connection) in zip(batch, connections) {
                let answer = connection.readToEnd()
                connection.close()
                let status = Self.status(of: answer)
                XCTAssertTrue(
                    answer.isEmpty || (status.map { $0 < 500 || $0 == 505 } ?? false),
                    "seed \(seed) request \(batchStart + offset): "
                        + "\(String(decoding: request.prefix(120), as: UTF8.self).debugDescription)"
                        + " → \(String(decoding: answer.prefix(60), as: UTF8.self).debugDescription)"
                )
            }
            XCTAssertEqual(
                try HTTPTestClient(port: server.port).get("/ping").status, 200, "seed \(seed) after batch \(batchStart)"
            )
        }
    }

    /// One to four edits: flip, insert an interesting token, delete a span, duplicate a span, or truncate.
    private static func mutate(_ input: [UInt8], using rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: bytes[at] ^= UInt8.random(in: 1...255, using: &rng)
            case 1: bytes.insert(contentsOf: interesting.randomElement(using: &rng)!, at: at)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &rng)))
            case 3:
                let span = bytes[at..<min(bytes.count, at + Int.random(in: 1...64, using: &rng))]
                bytes.insert(
                    contentsOf: Array(repeating: Array(span), count: Int.random(in: 1...50, using: &rng)).flatMap {
                        $0
                    }, at: at)
            default: bytes.removeSubrange(at...)
            }
        }
        return bytes
    }

    /// The status code of the first response in `answer`, if it starts like one.
    private static func status(of answer: [UInt8]) -> Int? {
        let text = String(decoding: answer.prefix(16), as: UTF8.self)
        guard text.hasPrefix("HTTP/1.") else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }
}
