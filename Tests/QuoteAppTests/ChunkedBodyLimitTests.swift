import Foundation
import TestSupport
import XCTest

/// A chunked body declares no length, so the route's limit is found out while it is read: the `413` is still
/// the route's surface's own, as when Content-Length declares too much.
final class ChunkedBodyLimitTests: XCTestCase {
    func testAChunkedBodyOverTheLimitIsRefusedInEachSurfacesDialect() async throws {
        try await withTestApp { app in
            let user = try await app.makeUser()
            let bearer = "Authorization: Bearer \(user.accessToken)\r\n"
            let supabase = "apikey: \(app.anonKey)\r\n\(bearer)"
            let json = "Content-Type: application/json\r\n"

            let v1 = try sendChunked(app, "POST /v1/collections", headers: bearer + json, size: (1 << 20) + 1)
            XCTAssertEqual(v1.status, 413)
            XCTAssertEqual(v1.header("Content-Type"), "application/problem+json")
            XCTAssertEqual(try v1.jsonObject()["code"] as? String, "payload_too_large")

            let auth = try sendChunked(app, "PUT /auth/v1/user", headers: supabase + json, size: 64 * 1024 + 1)
            XCTAssertEqual(auth.status, 413)
            XCTAssertEqual(try auth.jsonObject()["error_code"] as? String, "request_too_large", auth.text)
            XCTAssertNotNil(try auth.jsonObject()["msg"] as? String)

            let rest = try sendChunked(
                app, "POST /rest/v1/collections", headers: supabase + json, size: (1 << 20) + 1)
            XCTAssertEqual(rest.status, 413)
            XCTAssertEqual(try rest.jsonObject()["code"] as? String, "PGRST413", rest.text)
            XCTAssertTrue(try rest.jsonObject().keys.contains("hint"), "PostgREST's shape")

            let storage = try sendChunked(
                app, "POST /storage/v1/object/avatars/\(user.id)/a.png",
                headers: supabase + "Content-Type: image/png\r\n",
                size: (3 << 20) + 1)
            XCTAssertEqual(storage.status, 413)
            XCTAssertEqual(try storage.jsonObject()["statusCode"] as? String, "413", storage.text)
            XCTAssertEqual(try storage.jsonObject()["error"] as? String, "Payload too large")

            let cookie = try await app.consoleOwner()
            let console = try sendChunked(
                app, "POST /console/quotes",
                headers: "Cookie: \(cookie)\r\nContent-Type: application/x-www-form-urlencoded\r\n",
                size: 64 * 1024 + 1)
            XCTAssertEqual(console.status, 413)
            XCTAssertEqual(console.header("Content-Type"), "text/html; charset=utf-8")
            XCTAssertTrue(console.text.contains("Too large"), console.text)
            XCTAssertEqual(console.header("Content-Security-Policy"), TestApp.consoleContentSecurityPolicy)
        }
    }

    /// Issue 42: a chunked sign-up far past its limit was closed with no answer; it is answered while the client
    /// is still sending, and the client reads the answer.
    func testALargeChunkedSignUpIsAnsweredOnBothDoors() async throws {
        try await withTestApp { app in
            let json = "Content-Type: application/json\r\n"
            let v1 = try sendChunked(app, "POST /v1/auth/signup", headers: json, size: 1_536 << 10)
            XCTAssertEqual(v1.status, 413)
            XCTAssertEqual(try v1.jsonObject()["code"] as? String, "payload_too_large")
            let auth = try sendChunked(
                app, "POST /auth/v1/signup", headers: "apikey: \(app.anonKey)\r\n" + json, size: 1_536 << 10)
            XCTAssertEqual(auth.status, 413)
            XCTAssertEqual(try auth.jsonObject()["error_code"] as? String, "request_too_large", auth.text)
        }
    }

    /// Sends `request` (method and path) with `headers` and a chunked body of `size` bytes.
    private func sendChunked(_ app: TestApp, _ request: String, headers: String, size: Int) throws
        -> HTTPTestResponse
    {
        let connection = try HTTPTestConnection(port: app.application.port)
        defer { connection.close() }
        let head = "\(request) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)Transfer-Encoding: chunked\r\n\r\n"
        connection.write(
            Array((head + String(size, radix: 16) + "\r\n").utf8) + Array(repeating: UInt8(ascii: "a"), count: size)
                + Array("\r\n0\r\n\r\n".utf8))
        return try connection.readResponse(method: "POST")
    }
}
