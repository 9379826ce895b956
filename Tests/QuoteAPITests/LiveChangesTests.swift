import Foundation
import PGClient
import TestSupport
import XCTest

/// `GET /v1/sync/events`: an event with the feed's position after each change of the user's library, on any
/// instance; keep-alives; the end of the stream with the session; limits per user and per address.
final class LiveChangesTests: XCTestCase {
    private func open(_ app: TestApp, _ user: TestUser, source: String? = nil, receiveBuffer: Int? = nil) throws
        -> EventStreamTestClient
    {
        try EventStreamTestClient(
            port: app.application.port, path: "/v1/sync/events", headers: user.authorization, source: source,
            receiveBuffer: receiveBuffer)
    }

    /// Opens a stream and reads its first event: the position at connect.
    private func connect(_ app: TestApp, _ user: TestUser) throws -> (EventStreamTestClient, String) {
        let stream = try open(app, user)
        XCTAssertEqual(try stream.readHead(), 200)
        XCTAssertEqual(stream.header("Content-Type"), "text/event-stream; charset=utf-8")
        let first = try XCTUnwrap(stream.nextEvent())
        XCTAssertEqual(first.name, "changed")
        return (stream, try XCTUnwrap(first.next))
    }

    /// The favorites' quote ids `GET /v1/sync?since=` answers, and its `next`.
    private func favorites(_ app: TestApp, _ user: TestUser, since: String) throws -> ([String], String) {
        let body = try app.client.get("/v1/sync?since=\(since)", headers: user.authorization).jsonObject()
        let changes = body["changes"] as? [[String: Any]] ?? []
        return (
            changes.filter { $0["type"] as? String == "favorite" }.compactMap { $0["quote_id"] as? String },
            try XCTUnwrap(body["next"] as? String)
        )
    }

    func testFavoritesThroughV1AndRestArriveAsEventsWhoseTokenHoldsTheChange() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let other = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two", "Three"])
        let (stream, start) = try connect(app, user)
        XCTAssertEqual(try favorites(app, user, since: start).0, [], "the first event is the position now")

        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        let afterV1 = try XCTUnwrap(stream.nextEvent()?.next)
        let (viaV1, continued) = try favorites(app, user, since: start)
        XCTAssertEqual(viaV1, [lower(quotes[0])])
        XCTAssertEqual(continued, afterV1, "the event's token is the position after the change")

        // Another user's change sends nothing here: the next event is this user's own.
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[1]))", headers: other.authorization).status, 201)
        let rest = try app.supabase(
            "POST", "/rest/v1/user_favorites", as: user,
            body: ["user_id": lower(user.id), "quote_id": lower(quotes[2])])
        XCTAssertEqual(rest.status, 201, rest.text)
        let afterRest = try XCTUnwrap(stream.nextEvent()?.next)
        XCTAssertNotEqual(afterRest, afterV1, "no event for the other user's change")
        let (viaRest, end) = try favorites(app, user, since: afterV1)
        XCTAssertEqual(viaRest, [lower(quotes[2])])
        XCTAssertEqual(end, afterRest)
    }

    func testAChangeOnOneInstanceReachesAStreamOnAnother() async throws {
        let first = try await startTestApp()
        let second = try await startTestApp(databaseURL: first.databaseURL)
        let user = try await first.makeUser()
        let quote = try await first.insertQuotes(["Elsewhere"])[0]
        let (stream, start) = try connect(second, user)
        XCTAssertEqual(
            try first.client.send("PUT", "/v1/favorites/\(lower(quote))", headers: user.authorization).status, 201)
        let next = try XCTUnwrap(stream.nextEvent()?.next)
        let (changed, continued) = try favorites(second, user, since: start)
        XCTAssertEqual(changed, [lower(quote)])
        XCTAssertEqual(continued, next)
    }

    func testKeepAlivesArrive() async throws {
        let app = try await startTestApp { $0.liveFeed.keepAlive = .milliseconds(100) }
        let user = try await app.makeUser()
        let (stream, _) = try connect(app, user)
        var comments = 0
        for _ in 0..<20 where comments < 2 {
            if stream.next()?.comment == "keep-alive" { comments += 1 }
        }
        XCTAssertEqual(comments, 2)
    }

    func testTheStreamEndsWithItsSession() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let (stream, _) = try connect(app, user)
        let keptUser = try await app.makeUser()
        let (kept, _) = try connect(app, keptUser)
        XCTAssertEqual(try app.client.send("POST", "/v1/auth/logout", headers: user.authorization).status, 204)
        XCTAssertTrue(stream.ends(), "logout ends the stream (a notification; no keep-alive needed)")
        XCTAssertEqual(try open(app, user).readHead(), 401)
        // Revoked in the database by another path (the console): the same; other sessions' streams stay.
        let revokedUser = try await app.makeUser()
        let (revoked, _) = try connect(app, revokedUser)
        try await app.withConnection { connection in
            try connection.query("UPDATE sessions SET revoked_at = now() WHERE id = \(revokedUser.sessionID)")
        }
        XCTAssertTrue(revoked.ends())
        let quote = try await app.insertQuotes(["Still here"])[0]
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quote))", headers: keptUser.authorization).status, 201)
        XCTAssertEqual(kept.nextEvent()?.name, "changed")
    }

    func testStreamsPerUserAndPerAddressAreBounded() async throws {
        let app = try await startTestApp {
            $0.liveFeed.perUser = 2
            $0.liveFeed.perAddress = 3
            $0.httpRefusalDelay = 0
        }
        let alice = try await app.makeUser()
        let bob = try await app.makeUser()
        let carol = try await app.makeUser()
        var held = [try connect(app, alice).0, try connect(app, alice).0]
        let third = try open(app, alice)
        XCTAssertEqual(try third.readHead(), 429, "one past the per-user limit")
        XCTAssertNotNil(third.header("Retry-After"))
        held.append(try connect(app, bob).0)
        XCTAssertEqual(try open(app, carol).readHead(), 429, "one past the per-address limit")
        XCTAssertEqual(try open(app, carol, source: "127.0.0.2").readHead(), 200, "another address has its own")
        // A closed stream gives its slot back.
        held.removeFirst()
        for _ in 0..<250 where app.application.context.live.openStreams > 3 {
            // The server sees the close when it next writes: keep-alives are 15 s, so a change of Alice's wakes it.
            _ = try? await app.withConnection { connection in
                try connection.query("SELECT pg_notify('library_changes', \(lower(alice.id)))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertEqual(try open(app, alice).readHead(), 200)
        withExtendedLifetime(held) {}
    }

    func testAClientThatDoesNotReadItsEventsIsDisconnected() async throws {
        let app = try await startTestApp { $0.liveFeed.bufferLimit = 1024 }
        let user = try await app.makeUser()
        let stream = try open(app, user, receiveBuffer: 1024)
        XCTAssertEqual(try stream.readHead(), 200)
        let live = app.application.context.live
        // Never read again: each notification makes one more event, until the buffers on the way are full.
        for _ in 0..<5000 where live.openStreams > 0 {
            try await app.withConnection { connection in
                try connection.query("SELECT pg_notify('library_changes', \(lower(user.id)))")
            }
        }
        for _ in 0..<250 where app.application.server.openStreams > 0 { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(live.openStreams, 0, "the stream was cut off and forgotten")
        XCTAssertEqual(app.application.server.openStreams, 0)
        XCTAssertTrue(stream.ends())
    }

    func testChangesStillArriveAfterTheListeningConnectionIsKilled() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quote = try await app.insertQuotes(["After"])[0]
        let (stream, start) = try connect(app, user)
        let listener = try XCTUnwrap(app.application.context.live.notificationListener)
        let pid = listener.backendPID
        XCTAssertNotEqual(pid, 0)
        try await app.withConnection { connection in try connection.query("SELECT pg_terminate_backend(\(pid))") }
        // Listening again, it tells every stream the position (notifications may have been missed meanwhile).
        let recheck = try XCTUnwrap(stream.nextEvent(within: 20)?.next)
        XCTAssertEqual(recheck, start)
        XCTAssertGreaterThanOrEqual(listener.listeningSessions, 2)
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quote))", headers: user.authorization).status, 201)
        let next = try XCTUnwrap(stream.nextEvent()?.next)
        XCTAssertEqual(try favorites(app, user, since: start).0, [lower(quote)])
        XCTAssertNotEqual(next, start)
    }
}
