import Foundation
import HTTPServer
import Logging
import TestSupport
import XCTest

/// gzip and conditional requests at the HTTP layer: the size threshold at its edge, Accept-Encoding's grammar,
/// If-None-Match's comparison, and prepared bodies.
final class ResponseEncodingTests: XCTestCase {
    /// `/json/{n}`: a JSON string body of exactly n bytes, tagged; `/prepared`: a prepared 4 KB body.
    private func makeServer() throws -> HTTPServer {
        let prepared = PreparedBody(Array(("\"" + String(repeating: "prepared ", count: 500) + "\"").utf8))
        let routes = [
            Route(
                .get, "/json/{n}",
                handler: .immediate { request in
                    let n = Int(request.pathParameter("n")) ?? 2
                    return Response.json(bytes: Array(("\"" + String(repeating: "a", count: n - 2) + "\"").utf8))
                        .taggedWithETag()
                }),
            Route(
                .get, "/prepared",
                handler: .immediate { _ in Response.json(prepared: prepared, headers: ["Cache-Control": "max-age=60"]) }
            ),
            Route(
                .get, "/image",
                handler: .immediate { _ in
                    Response(
                        status: 200, headers: ["Content-Type": "image/png"], body: [UInt8](repeating: 7, count: 4096))
                }),
        ]
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0), router: Router(routes: routes), logger: logger)
        try server.start()
        return server
    }

    func testBodiesOverOneKilobyteAreGzippedAndReadBackByZlib() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        let accept = ["Accept-Encoding": "deflate, gzip, br, zstd"]  // what the app's client sends
        let atLimit = try client.get("/json/1024", headers: accept)
        XCTAssertNil(atLimit.header("Content-Encoding"), "1,024 bytes: sent as they are")
        XCTAssertEqual(atLimit.body.count, 1024)
        XCTAssertEqual(atLimit.header("Vary"), "Accept-Encoding", "could be compressed another time")
        let pastLimit = try client.get("/json/1025", headers: accept)
        XCTAssertEqual(pastLimit.header("Content-Encoding"), "gzip", "1,025 bytes: compressed")
        XCTAssertEqual(pastLimit.header("Vary"), "Accept-Encoding")
        XCTAssertLessThan(pastLimit.body.count, 100)
        XCTAssertEqual(gunzip(pastLimit.body), try client.get("/json/1025").body, "zlib reads back the identity body")

        let prepared = try client.get("/prepared", headers: accept)
        XCTAssertEqual(prepared.header("Content-Encoding"), "gzip")
        XCTAssertEqual(gunzip(prepared.body), try client.get("/prepared").body)

        let image = try client.get("/image", headers: accept)
        XCTAssertNil(image.header("Content-Encoding"), "images are not compressed")
        XCTAssertNil(image.header("Vary"))
        await server.shutdown()
    }

    func testAcceptEncodingIsReadByItsGrammar() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        let cases: [(String?, Bool)] = [
            (nil, false), ("identity", false), ("gzip", true), ("GZIP", true), ("x-gzip", true),
            ("br;q=1.0, gzip;q=0.5", true),
            ("gzip;q=0", false), ("gzip; q=0.000", false), ("*", true), ("*;q=0", false), ("gzip;q=0, *", false),
            ("deflate, br", false), ("*, gzip;q=0", false),
        ]
        for (header, compressed) in cases {
            let response = try client.get("/json/4000", headers: header.map { ["Accept-Encoding": $0] } ?? [:])
            XCTAssertEqual(response.header("Content-Encoding") == "gzip", compressed, header ?? "no Accept-Encoding")
        }
        await server.shutdown()
    }

    func testIfNoneMatchGets304WithoutABody() async throws {
        let server = try makeServer()
        let client = HTTPTestClient(port: server.port)
        let first = try client.get("/prepared")
        let etag = try XCTUnwrap(first.header("ETag"))
        XCTAssertTrue(etag.hasPrefix("\"") && etag.hasSuffix("\""), etag)
        XCTAssertEqual(try client.get("/prepared").header("ETag"), etag, "the same body, the same tag")

        for header in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
            let response = try client.get("/prepared", headers: ["If-None-Match": header])
            XCTAssertEqual(response.status, 304, header)
            XCTAssertEqual(response.body, [], header)
            XCTAssertEqual(response.header("ETag"), etag)
            XCTAssertEqual(response.header("Cache-Control"), "max-age=60", "kept on the 304")
            XCTAssertNil(response.header("Content-Type"))
        }
        XCTAssertEqual(try client.get("/prepared", headers: ["If-None-Match": "\"other\""]).status, 200)

        // The compressed answer carries the weak form of the tag; either form gets the 304.
        let gzipped = try client.get("/prepared", headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(gzipped.header("ETag"), "W/" + etag)
        XCTAssertEqual(
            try client.get("/prepared", headers: ["Accept-Encoding": "gzip", "If-None-Match": "W/" + etag]).status, 304)

        // Tags follow the bytes.
        let a = try client.get("/json/2000").header("ETag"), b = try client.get("/json/2001").header("ETag")
        XCTAssertNotNil(a)
        XCTAssertNotEqual(a, b)
        await server.shutdown()
    }
}
