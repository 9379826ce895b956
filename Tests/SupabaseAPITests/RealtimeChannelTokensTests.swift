import Foundation
import TestSupport
import XCTest

/// A token per channel, as in Supabase Realtime: two channels on one socket with two users' tokens each see only
/// their own user's rows; an `access_token` on one channel, its expiry or its session's end changes that channel
/// alone.
final class RealtimeChannelTokensTests: XCTestCase {
    private let favorites: [[String: Any]] = [["event": "*", "schema": "public", "table": "user_favorites"]]

    /// The topics of the `postgres_changes` that arrive within `seconds` (each with its record's user).
    private func changes(on socket: WebSocketTestClient, within seconds: Double = 1) -> [String] {
        var seen: [String] = []
        while let message = socket.next("postgres_changes", within: seconds) {
            let data = (message["payload"] as? [String: Any])?["data"] as? [String: Any]
            let row = (data?["record"] as? [String: Any]) ?? (data?["old_record"] as? [String: Any])
            seen.append("\(message["topic"] as? String ?? "?") \(row?["user_id"] as? String ?? "?")")
        }
        return seen.sorted()
    }

    func testEachChannelKeepsItsOwnToken() async throws {
        let app = try await startTestApp()
        let ada = try await app.makeUser()
        let bob = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two", "Three", "Four"])
        let socket = try app.realtime()
        XCTAssertEqual(status(socket.join("realtime:ada", changes: favorites, token: ada.accessToken)), "ok")
        XCTAssertEqual(status(socket.join("realtime:bob", changes: favorites, token: bob.accessToken)), "ok")
        func favorite(_ user: TestUser, _ quote: UUID) throws {
            XCTAssertEqual(
                try app.client.send("PUT", "/v1/favorites/\(lower(quote))", headers: user.authorization).status, 201)
        }
        try favorite(ada, quotes[0])
        try favorite(bob, quotes[0])
        XCTAssertEqual(
            changes(on: socket), ["realtime:ada \(lower(ada.id))", "realtime:bob \(lower(bob.id))"],
            "each channel its own user's row, once")

        // Bob's channel swapped to the anon key: his rows stop there; Ada's channel is untouched.
        XCTAssertEqual(
            status(socket.reply(to: socket.push("realtime:bob", "access_token", ["access_token": app.anonKey]))), "ok")
        try favorite(bob, quotes[1])
        try favorite(ada, quotes[1])
        XCTAssertEqual(changes(on: socket), ["realtime:ada \(lower(ada.id))"])

        // A refused token closes its channel only.
        let bobs = try app.realtime()
        XCTAssertEqual(status(bobs.join("realtime:bob", changes: favorites, token: bob.accessToken)), "ok")
        XCTAssertEqual(status(bobs.join("realtime:ada", changes: favorites, token: ada.accessToken)), "ok")
        bobs.push("realtime:bob", "access_token", ["access_token": "not.a.token"])
        XCTAssertEqual(bobs.next("phx_close")?["topic"] as? String, "realtime:bob")
        try favorite(bob, quotes[2])
        try favorite(ada, quotes[2])
        XCTAssertEqual(changes(on: bobs), ["realtime:ada \(lower(ada.id))"])

        // A token that expires closes its channel only.
        XCTAssertEqual(
            status(socket.join("realtime:brief", changes: favorites, token: try app.token(for: bob, expiresIn: 2))),
            "ok")
        let expired = try XCTUnwrap(
            socket.nextMessage(within: 15) {
                !($0["event"] as? String == "system"
                    && ($0["payload"] as? [String: Any])?["status"] as? String == "error")
            })
        XCTAssertEqual(expired["topic"] as? String, "realtime:brief")
        XCTAssertEqual((expired["payload"] as? [String: Any])?["message"] as? String, "Token has expired")
        XCTAssertEqual(socket.next("phx_close")?["topic"] as? String, "realtime:brief")

        // Ada's session ends: her channels close, the anon channel on the same socket stays joined.
        XCTAssertEqual(try app.client.send("POST", "/v1/auth/logout", headers: ada.authorization).status, 204)
        let ended = try XCTUnwrap(socket.next("phx_close"))
        XCTAssertEqual(ended["topic"] as? String, "realtime:ada")
        XCTAssertTrue(socket.staysQuiet(for: 0.5) { $0["event"] as? String != "phx_close" }, "only Ada's channel")
        let leave = socket.reply(to: socket.push("realtime:bob", "phx_leave"))
        XCTAssertEqual(status(leave), "ok", "Bob's channel was still joined")
        XCTAssertEqual(bobs.next("phx_close")?["topic"] as? String, "realtime:ada")
    }
}
