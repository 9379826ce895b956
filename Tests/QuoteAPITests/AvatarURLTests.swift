import Foundation
import QuoteAPI
import TestSupport
import XCTest

/// `avatar_url` a phone can load (issue 24): absolute, from the one public base URL (`SUPABASE_PUBLIC_URL`, by
/// default the server's own address), on `/v1` and on the Supabase APIs, and it downloads the image through its
/// own scheme, host and port.
final class AvatarURLTests: XCTestCase {
    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 5, count: 64)
    private static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 3, count: 64)

    /// A server on a port known before it starts (so that the default public URL names it), configured by `configure`.
    private func startOnAFixedPort(
        databaseURL: String? = nil, _ configure: @escaping (inout AppConfiguration, Int) -> Void = { _, _ in }
    ) async throws -> TestApp {
        let (port, databaseURL) = try await withTestApp(databaseURL: databaseURL) {
            ($0.application.port, $0.databaseURL)
        }
        return try await TestApp.start(databaseURL: databaseURL) {
            $0.port = port
            configure(&$0, port)
        }
    }

    /// GET `url` by its own scheme, host and port (only loopback names are resolved: tests stay on 127.0.0.0/8).
    private func download(_ url: String) throws -> HTTPTestResponse {
        let parts = try XCTUnwrap(URLComponents(string: url), url)
        XCTAssertEqual(parts.scheme, "http", url)
        let host = try XCTUnwrap(parts.host, url)
        let port = try XCTUnwrap(parts.port, url)
        let address = host == "localhost" ? "127.0.0.1" : host
        XCTAssertTrue(address.hasPrefix("127."), url)
        let target = parts.percentEncodedPath + (parts.percentEncodedQuery.map { "?\($0)" } ?? "")
        return try HTTPTestClient(host: address, port: port).get(target)
    }

    /// Uploads through `/v1` and through Supabase Storage; each time the URL `/v1`, `/auth/v1`'s session user and
    /// `/rest/v1/profiles` show starts with `base` and downloads the image just uploaded.
    private func assertAvatarURLs(_ app: TestApp, base: String, email: String) throws {
        let signUp = try app.client.send(
            "POST", "/v1/auth/signup", json: ["email": email, "password": "correct horse"])
        XCTAssertEqual(signUp.status, 201)
        let session = try signUp.jsonObject()
        let token = try XCTUnwrap(session["access_token"] as? String)
        let id = try XCTUnwrap((session["user"] as? [String: Any])?["id"] as? String)
        let v1 = ["Authorization": "Bearer \(token)"]
        let supabase = ["apikey": app.anonKey, "Authorization": "Bearer \(token)"]

        // /v1: the upload's answer and /v1/me.
        let png = v1.merging(["Content-Type": "image/png"]) { $1 }
        let uploaded = try app.client.send("PUT", "/v1/me/avatar", headers: png, body: Self.png)
        XCTAssertEqual(uploaded.status, 200, uploaded.text)
        let url = try XCTUnwrap(try uploaded.jsonObject()["avatar_url"] as? String)
        XCTAssertTrue(url.hasPrefix("\(base)/v1/avatars/\(id)?v="), url)
        XCTAssertEqual(try app.client.get("/v1/me", headers: v1).jsonObject()["avatar_url"] as? String, url)
        let image = try download(url)
        XCTAssertEqual(image.status, 200)
        XCTAssertEqual(image.header("Content-Type"), "image/png")
        XCTAssertEqual(image.body, Self.png)

        // The Supabase doors: a Storage upload, then the profile row through /rest/v1.
        let jpeg = supabase.merging(["Content-Type": "image/jpeg", "x-upsert": "true"]) { $1 }
        let stored = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(id)/avatar.jpg", headers: jpeg,
            body: Self.jpeg)
        XCTAssertEqual(stored.status, 200, stored.text)
        let row = try app.client.get("/rest/v1/profiles?select=avatar_url&id=eq.\(id)", headers: supabase)
        let restURL = try XCTUnwrap(row.jsonArray.first?["avatar_url"] as? String, row.text)
        XCTAssertTrue(restURL.hasPrefix("\(base)/v1/avatars/\(id)?v="), restURL)
        XCTAssertNotEqual(restURL, url, "a new version")
        let replaced = try download(restURL)
        XCTAssertEqual(replaced.status, 200)
        XCTAssertEqual(replaced.header("Content-Type"), "image/jpeg")
        XCTAssertEqual(replaced.body, Self.jpeg)
        // A session answered by /auth/v1 carries the same profile on /v1.
        let login = try app.supabase(
            "POST", "/auth/v1/token?grant_type=password",
            body: ["email": email, "password": "correct horse"])
        let supabaseToken = try XCTUnwrap(try login.jsonObject()["access_token"] as? String)
        let me = try app.client.get("/v1/me", headers: ["Authorization": "Bearer \(supabaseToken)"])
        XCTAssertEqual(try me.jsonObject()["avatar_url"] as? String, restURL)
    }

    func testTheDefaultIsTheServersOwnAddress() async throws {
        let app = try await startOnAFixedPort()
        try assertAvatarURLs(app, base: "http://127.0.0.1:\(app.application.port)", email: "default@x.io")
        await app.stop()
    }

    func testStoredURLsFollowThePublicURLWhenTheServerStarts() async throws {
        let first = try await startOnAFixedPort { configuration, port in
            configuration.supabasePublicURL = "http://localhost:\(port)"
        }
        let moved = try await first.makeUser(), legacy = try await first.makeUser(), own = try await first.makeUser()
        for user in [moved, legacy] {
            let png = user.authorization.merging(["Content-Type": "image/png"]) { $1 }
            let uploaded = try first.client.send("PUT", "/v1/me/avatar", headers: png, body: Self.png)
            XCTAssertEqual(uploaded.status, 200, uploaded.text)
        }
        // Written before URLs were absolute: the bare path.
        try await first.withConnection { connection in
            try connection.query(
                """
                UPDATE profiles SET avatar_url = substring(avatar_url FROM '/v1/avatars/.*$') WHERE id = \(legacy.id)
                """)
        }
        let custom = "https://cdn.example/v1/avatars/mine.png"
        let written = try first.supabase(
            "PATCH", "/rest/v1/profiles?id=eq.\(own.id)", as: own,
            body: ["avatar_url": custom])
        XCTAssertEqual(written.status, 204)
        await first.stop()

        // The same database served under another public URL (here the default, the server's own address).
        let second = try await startOnAFixedPort(databaseURL: first.databaseURL)
        try await second.application.rebaseAvatarURLs()
        let base = "http://127.0.0.1:\(second.application.port)"
        for user in [moved, legacy] {
            let me = try second.client.get("/v1/me", headers: user.authorization)
            let url = try XCTUnwrap(try me.jsonObject()["avatar_url"] as? String)
            XCTAssertTrue(url.hasPrefix("\(base)/v1/avatars/\(user.id.uuidString.lowercased())?v="), url)
            XCTAssertEqual(try download(url).body, Self.png)
        }
        let owned = try second.client.get("/v1/me", headers: own.authorization)
        XCTAssertEqual(try owned.jsonObject()["avatar_url"] as? String, custom, "a URL the owner wrote is theirs")
        let again = try await second.application.context.profiles.rebaseAvatarURLs()
        XCTAssertEqual(again, 0)
        await second.stop()
    }

    func testSupabasePublicURLIsTheBaseOnBothAPIs() async throws {
        let app = try await startOnAFixedPort { configuration, port in
            configuration.supabasePublicURL = "http://localhost:\(port)"
        }
        try assertAvatarURLs(app, base: "http://localhost:\(app.application.port)", email: "configured@x.io")
        await app.stop()
    }
}
