import Foundation
import QuoteAPI
import TestSupport
import XCTest

/// Issue 30's body rules over HTTP: small bodies (logins, sign-ups, small writes) have a reserved share of the body
/// budget that uploads cannot take; a large body needs a user's token, never the anon key alone; an upload that
/// stalls is cut off after the grace, and its share freed.
final class BodyShareTests: XCTestCase {
    /// Opens an upload of `declared` bytes to the user's avatar (or `target`) from `source` and sends only its
    /// first bytes, or all but its last (`holding`): a body is counted by the bytes it has sent.
    private func stalledUpload(
        _ app: TestApp, _ user: TestUser, declared: Int, holding: Bool = false, from source: String,
        target: String = "PUT /v1/me/avatar"
    ) throws -> HTTPTestConnection {
        let connection = try HTTPTestConnection(port: app.application.port, source: source)
        let head =
            "\(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(user.accessToken)\r\n"
            + "apikey: \(app.anonKey)\r\nContent-Type: image/png\r\nContent-Length: \(declared)\r\n\r\n"
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47]
        XCTAssertTrue(
            connection.write(Array(head.utf8) + png + Array(repeating: 0, count: holding ? declared - 5 : 0)))
        return connection
    }

    /// Waits (bounded: 10 s) until the server holds `bytes` of bodies.
    private func awaitBuffered(_ app: TestApp, _ predicate: (Int) -> Bool) async throws {
        for _ in 0..<200 where !predicate(app.application.server.bufferedBodyBytes) {
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func testUploadsFillingTheirShareLeaveLoginsAndSmallWritesAlone() async throws {
        let app = try await startTestApp {
            $0.httpBodyBudget = 2 << 20
            $0.httpSmallBodyReserve = 1 << 20
            $0.httpBodyMinRate = 0
            $0.httpRefusalDelay = 0
        }
        let user = try await app.makeUser()
        _ = try app.client.send("POST", "/v1/auth/signup", json: ["email": "small@x.io", "password": "correct horse"])
        // Two uploads from two addresses take the large bodies' share (2 MiB - 1 MiB reserved), within each
        // address's share (a quarter of the budget).
        let uploads = try [
            stalledUpload(app, user, declared: 512 << 10, holding: true, from: "127.0.0.2"),
            stalledUpload(app, user, declared: 512 << 10, holding: true, from: "127.0.0.3"),
        ]
        // Exactly the two uploads, each holding all but one byte: the sign-up's body above is given back when its
        // request completes, which can come just after its answer reached the client.
        try await awaitBuffered(app) { $0 == (1 << 20) - 2 }
        XCTAssertEqual(app.application.server.bufferedBodyBytes, (1 << 20) - 2)
        // Past the large share: refused at once.
        let past = try HTTPTestConnection(port: app.application.port, source: "127.0.0.4")
            .send(
                "PUT", "/v1/me/avatar", headers: user.authorization + ["Content-Type": "image/png"],
                body: [UInt8](repeating: 0, count: 65 << 10))
        XCTAssertEqual(past.status, 503, past.text)
        XCTAssertNotNil(past.header("Retry-After"))
        // Logins, sign-ups and small writes draw on the reserve.
        let credentials = ["email": "small@x.io", "password": "correct horse"]
        let login = try app.client.send("POST", "/v1/auth/login", json: credentials)
        XCTAssertEqual(login.status, 200, login.text)
        let signUp = try app.client.send("POST", "/v1/auth/signup", json: credentials + ["email": "other@x.io"])
        XCTAssertEqual(signUp.status, 201, signUp.text)
        let write = try app.client.send("POST", "/v1/collections", json: ["name": "Kept"], headers: user.authorization)
        XCTAssertEqual(write.status, 201, write.text)
        // A small body at the limit (64 KiB) is still small.
        let name = String(repeating: "a", count: (64 << 10) - 20)
        let atLimit = try app.client.send(
            "PATCH", "/v1/me", headers: user.authorization + ["Content-Type": "application/json"],
            body: Array(("{\"display_name\":\"" + name + "\"}").utf8))
        XCTAssertNotEqual(atLimit.status, 503, atLimit.text)
        for upload in uploads { upload.close() }
    }

    func testOneAccountsLargeBodiesHoldAtMostItsShare() async throws {
        let app = try await startTestApp {
            $0.httpBodyMinRate = 0
            $0.httpRefusalDelay = 0
        }
        let (user, other) = (try await app.makeUser(), try await app.makeUser())
        let storage = "POST /storage/v1/object/avatars/\(user.id.uuidString.lowercased())"
        // 3 + 3 + 2 MiB from three addresses: the account's 8 MiB exactly.
        let uploads = try [
            stalledUpload(app, user, declared: 3 << 20, holding: true, from: "127.0.0.2", target: storage + "/a.png"),
            stalledUpload(app, user, declared: 3 << 20, holding: true, from: "127.0.0.3", target: storage + "/b.png"),
            stalledUpload(app, user, declared: 2 << 20, holding: true, from: "127.0.0.4"),
        ]
        // Each holds all but one byte of what it declared.
        try await awaitBuffered(app) { $0 >= (8 << 20) - 3 }
        XCTAssertEqual(app.application.server.bufferedBodyBytes, (8 << 20) - 3)
        let past = try stalledUpload(app, user, declared: (64 << 10) + 1, from: "127.0.0.5")
        XCTAssertEqual(try past.readResponse().status, 503, "one large body past the account's share")
        past.close()
        // Another account from the same address has its own share.
        let another = try stalledUpload(app, other, declared: (64 << 10) + 1, holding: true, from: "127.0.0.5")
        try await awaitBuffered(app) { $0 > 8 << 20 }
        XCTAssertEqual(app.application.server.bufferedBodyBytes, (8 << 20) - 3 + (64 << 10))
        for upload in uploads + [another] { upload.close() }
    }

    /// Issue 42's F2: many addresses trickling bodies they declared large hold only what they sent, and the
    /// credential routes' bodies are held within their connections: logins and sign-ups are read and served.
    func testTricklersFromManyAddressesLeaveLoginsAndSignUpsRoom() async throws {
        let app = try await startTestApp {
            $0.httpSmallBodyReserve = 256 << 10
            $0.httpBodyMinRate = 0
            $0.httpRefusalDelay = 0
        }
        _ = try app.client.send("POST", "/v1/auth/signup", json: ["email": "room@x.io", "password": "correct horse"])
        var tricklers: [HTTPTestConnection] = []
        for address in 2...10 {
            for (target, declared) in [("/v1/auth/login", 8 << 10), ("/rest/v1/collections", 32 << 10)] {
                let trickler = try HTTPTestConnection(port: app.application.port, source: "127.0.0.\(address)")
                let head =
                    "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\napikey: \(app.anonKey)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(declared)\r\n\r\n{\"email\":\""
                XCTAssertTrue(trickler.write(Array(head.utf8)))
                tricklers.append(trickler)
            }
        }
        // Declared, the /rest/v1 bodies alone would be past the reserve; held, they are a few bytes each.
        try await awaitBuffered(app) { $0 == 9 * 10 }
        XCTAssertEqual(app.application.server.bufferedBodyBytes, 9 * 10)
        let login = try app.client.send(
            "POST", "/v1/auth/login", json: ["email": "room@x.io", "password": "correct horse"])
        XCTAssertEqual(login.status, 200, login.text)
        let signUp = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": "new@x.io", "password": "correct horse"])
        XCTAssertEqual(signUp.status, 201, signUp.text)
        let token = try app.client.send(
            "POST", "/auth/v1/token?grant_type=password",
            headers: app.supabaseHeaders(nil, ["Content-Type": "application/json"]),
            body: Array(#"{"email":"room@x.io","password":"correct horse"}"#.utf8))
        XCTAssertEqual(token.status, 200, token.text)
        for trickler in tricklers { trickler.close() }
    }

    /// Routes that take credentials take bodies up to 8 KiB on both doors; one byte more is refused from the
    /// headers.
    func testCredentialRoutesTakeBodiesUpTo8KiB() async throws {
        let app = try await startTestApp { $0.httpRefusalDelay = 0 }
        let limit = 8 << 10
        let prefix = #"{"email":"edge@x.io","password":""#
        let atLimit = Array((prefix + String(repeating: "a", count: limit - prefix.utf8.count - 2) + "\"}").utf8)
        XCTAssertEqual(atLimit.count, limit)
        let v1 = try app.client.send(
            "POST", "/v1/auth/login", headers: ["Content-Type": "application/json"], body: atLimit)
        XCTAssertNotEqual(v1.status, 413, v1.text)
        let goTrue = try app.client.send(
            "POST", "/auth/v1/token?grant_type=password",
            headers: app.supabaseHeaders(nil, ["Content-Type": "application/json"]), body: atLimit)
        XCTAssertNotEqual(goTrue.status, 413, goTrue.text)
        for (target, key) in [("/v1/auth/signup", ""), ("/auth/v1/signup", "apikey: \(app.anonKey)\r\n")] {
            let past = try HTTPTestConnection(port: app.application.port)
            past.write(
                Array(
                    ("POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(key)Content-Type: application/json\r\n"
                        + "Content-Length: \(limit + 1)\r\n\r\n").utf8))
            XCTAssertEqual(try past.readResponse().status, 413, target)
            past.close()
        }
    }

    func testTheAnonKeyAloneCannotSendALargeBody() async throws {
        let app = try await startTestApp { $0.httpRefusalDelay = 0 }
        let user = try await app.makeUser()
        let large = [UInt8](repeating: 0x41, count: (64 << 10) + 1)
        let object = "/storage/v1/object/avatars/\(user.id.uuidString.lowercased())/a.png"
        let anonymousHeaders = app.supabaseHeaders(nil, ["Content-Type": "image/png"])
        let anonymous = try app.client.send("POST", object, headers: anonymousHeaders, body: large)
        XCTAssertEqual(anonymous.status, 403, anonymous.text)
        XCTAssertTrue(anonymous.text.contains("access token"), anonymous.text)
        let json = app.supabaseHeaders(nil, ["Content-Type": "application/json"])
        let rest = try app.client.send("POST", "/rest/v1/collections", headers: json, body: large)
        XCTAssertEqual(rest.status, 401, rest.text)
        // At the limit the anon key is the route's business (here: refused by the row rules, not by size).
        let small = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(user.id.uuidString.lowercased())/a.png",
            headers: app.supabaseHeaders(nil, ["Content-Type": "image/png"]),
            body: [UInt8](repeating: 0x41, count: 64 << 10))
        XCTAssertFalse(small.text.contains("access token"), small.text)
        // A user's token may send the large body.
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 70 << 10)
        let owned = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(user.id.uuidString.lowercased())/a.png",
            headers: app.supabaseHeaders(user, ["Content-Type": "image/png"]), body: png)
        XCTAssertNotEqual(owned.status, 403, owned.text)
        XCTAssertFalse(owned.text.contains("access token"), owned.text)
    }

    func testAStalledUploadIsCutOffAndItsShareFreed() async throws {
        let app = try await startTestApp {
            $0.httpBodyMinRate = 4096
            $0.httpBodyGrace = 1
        }
        let user = try await app.makeUser()
        let upload = try stalledUpload(app, user, declared: 1 << 20, from: "127.0.0.2")
        defer { upload.close() }
        try await awaitBuffered(app) { $0 > 0 }
        XCTAssertEqual(app.application.server.bufferedBodyBytes, 4, "the bytes it sent")
        // Far below 4 KiB/s after the grace: the server closes the connection and gives the bytes back.
        try await awaitBuffered(app) { $0 == 0 }
        XCTAssertEqual(app.application.server.bufferedBodyBytes, 0)
        let rest = upload.readToEnd()
        XCTAssertFalse(String(decoding: rest, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }
}

private func + (lhs: [String: String], rhs: [String: String]) -> [String: String] { lhs.merging(rhs) { $1 } }
