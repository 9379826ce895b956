import Foundation
import TestSupport
import XCTest

/// `/storage/v1` for the `avatars` bucket: the same avatar data as `/v1/me/avatar`, writable only under one's
/// own id, readable by anyone.
final class SupabaseStorageTests: XCTestCase {
    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64)
    private static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 9, count: 64)

    /// The form supabase-py sends: `cacheControl`, then the file part named `file`.
    private func multipart(_ bytes: [UInt8], partName: String = "file") -> (String, [UInt8]) {
        let boundary = "6f556c5abdee57bcf55f2ad343706e42"
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"cacheControl\"\r\n\r\n3600\r\n".utf8)
        body += Array(
            ("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(partName)\"; filename=\"avatar.png\"\r\n"
                + "Content-Type: image/png\r\n\r\n")
                .utf8)
        body += bytes + Array("\r\n--\(boundary)--\r\n".utf8)
        return ("multipart/form-data; boundary=\(boundary)", body)
    }

    private func upload(
        _ app: TestApp, _ user: TestUser, path: String, _ bytes: [UInt8], upsert: Bool = false,
        method: String = "POST", partName: String = "file"
    ) throws -> HTTPTestResponse {
        let (contentType, body) = multipart(bytes, partName: partName)
        var headers = app.supabaseHeaders(user, ["Content-Type": contentType])
        if upsert { headers["x-upsert"] = "true" }
        return try app.client.send(method, "/storage/v1/object/avatars/\(path)", headers: headers, body: body)
    }

    func testUploadDownloadAndTheSameAvatarAsV1() async throws {
        let app = try await startTestApp()
        let alice = try await app.makeUser()
        let id = alice.id.uuidString.lowercased()
        let stored = try upload(app, alice, path: "\(id)/avatar.png", Self.png)
        XCTAssertEqual(stored.status, 200)
        XCTAssertEqual(try stored.jsonObject()["Key"] as? String, "avatars/\(id)/avatar.png")
        XCTAssertNotNil(try stored.jsonObject()["Id"] as? String)

        let download = try app.client.get(
            "/storage/v1/object/avatars/\(id)/avatar.png", headers: app.supabaseHeaders(alice))
        XCTAssertEqual(download.body, Self.png)
        XCTAssertEqual(download.header("Content-Type"), "image/png")
        let publicURL = try app.client.get("/storage/v1/object/public/avatars/\(id)/avatar.png?download=me.png")
        XCTAssertEqual(publicURL.body, Self.png, "a public bucket needs no key")
        XCTAssertEqual(publicURL.header("Content-Disposition"), "attachment; filename=\"me.png\"")
        XCTAssertEqual(try app.client.get("/v1/avatars/\(id)").body, Self.png, "the same data as /v1")

        // A second upload without x-upsert is a duplicate; with it, it replaces (supabase-swift's empty part name).
        let duplicate = try upload(app, alice, path: "\(id)/avatar.png", Self.jpeg)
        XCTAssertEqual(duplicate.status, 400)
        XCTAssertEqual(try duplicate.jsonObject()["statusCode"] as? String, "409")
        XCTAssertEqual(
            try upload(app, alice, path: "\(id)/avatar.png", Self.jpeg, upsert: true, partName: "").status, 200)
        XCTAssertEqual(try app.client.get("/v1/avatars/\(id)").header("Content-Type"), "image/jpeg")
        XCTAssertEqual(try upload(app, alice, path: "\(id)/avatar.png", Self.png, method: "PUT").status, 200)

        // Set through /v1, seen in the bucket as <id>/avatar.
        XCTAssertEqual(
            try app.client.send(
                "PUT", "/v1/me/avatar", headers: alice.authorization.merging(["Content-Type": "image/jpeg"]) { $1 },
                body: Self.jpeg
            ).status, 200)
        XCTAssertEqual(try app.client.get("/storage/v1/object/public/avatars/\(id)/avatar").body, Self.jpeg)
        XCTAssertEqual(try app.client.get("/storage/v1/object/public/avatars/\(id)/avatar.png").status, 400)

        let removed = try app.client.send(
            "DELETE", "/storage/v1/object/avatars",
            headers: app.supabaseHeaders(alice, ["Content-Type": "application/json"]),
            body: Array(#"{"prefixes":["\#(id)/avatar"]}"#.utf8))
        XCTAssertEqual(removed.jsonArray.first?["name"] as? String, "\(id)/avatar")
        XCTAssertTrue(try app.client.get("/v1/me", headers: alice.authorization).jsonObject()["avatar_url"] is NSNull)
    }

    func testOnlyTheOwnerWritesAndOnlyImagesAreStored() async throws {
        let app = try await startTestApp()
        let alice = try await app.makeUser(), bob = try await app.makeUser()
        let aliceID = alice.id.uuidString.lowercased()
        let intrusion = try upload(app, bob, path: "\(aliceID)/avatar.png", Self.png, upsert: true)
        XCTAssertEqual(intrusion.status, 400)
        XCTAssertEqual(try intrusion.jsonObject()["statusCode"] as? String, "403")
        XCTAssertEqual(try app.client.get("/v1/avatars/\(aliceID)").status, 404)
        let anonymous = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(aliceID)/a.png",
            headers: app.supabaseHeaders(nil, ["Content-Type": "image/png"]), body: Self.png)
        XCTAssertEqual(try anonymous.jsonObject()["statusCode"] as? String, "403")
        let fake = try upload(app, alice, path: "\(aliceID)/avatar.png", Array("\u{89}PNG...".utf8))
        XCTAssertEqual(try fake.jsonObject()["statusCode"] as? String, "415")
        let raw = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(aliceID)/raw.png",
            headers: app.supabaseHeaders(alice, ["Content-Type": "image/png"]), body: Self.png)
        XCTAssertEqual(raw.status, 200, "a raw body is the file")
        let removedByBob = try app.client.send(
            "DELETE", "/storage/v1/object/avatars",
            headers: app.supabaseHeaders(bob, ["Content-Type": "application/json"]),
            body: Array(#"{"prefixes":["\#(aliceID)/raw.png"]}"#.utf8))
        XCTAssertEqual(removedByBob.jsonArray.count, 0)
        XCTAssertEqual(try app.client.get("/v1/avatars/\(aliceID)").status, 200)
        let truncated = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(aliceID)/t.png",
            headers: app.supabaseHeaders(
                alice, ["Content-Type": "multipart/form-data; boundary=abc", "x-upsert": "true"]),
            body: Array("--abc\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n".utf8) + Self.png)
        XCTAssertEqual(truncated.status, 400)
        XCTAssertEqual(
            try app.client.get("/storage/v1/object/avatars/\(aliceID)/../x", headers: app.supabaseHeaders(alice))
                .status, 404)
        XCTAssertEqual(
            try app.client.get("/storage/v1/object/other/\(aliceID)/raw.png", headers: app.supabaseHeaders(alice))
                .status, 400)
    }
}
