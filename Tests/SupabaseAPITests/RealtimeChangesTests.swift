import Foundation
import TestSupport
import XCTest

/// `/realtime/v1/websocket`'s postgres_changes: the join reply, the wire shape of a change, delivery of a user's
/// own rows only (written through `/v1` or `/rest/v1`), filters, public tables for the anon key, and a token
/// refreshed, expired or logged out.
final class RealtimeChangesTests: XCTestCase {
    private func favorites(of user: TestUser, filter: Bool = true) -> [[String: Any]] {
        var entry: [String: Any] = ["event": "*", "schema": "public", "table": "user_favorites"]
        if filter { entry["filter"] = "user_id=eq.\(lower(user.id))" }
        return [entry]
    }

    func testAUserSeesTheirOwnFavoritesFromBothDoorsAndNothingOfAnotherUsers() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let other = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two", "Three"])
        let socket = try app.realtime()
        XCTAssertEqual(socket.status, 101)
        let reply = try XCTUnwrap(
            socket.join("realtime:favorites", changes: favorites(of: user), token: user.accessToken))
        XCTAssertEqual(status(reply), "ok")
        let listed = try XCTUnwrap((reply["response"] as? [String: Any])?["postgres_changes"] as? [[String: Any]])
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed[0]["table"] as? String, "user_favorites")
        XCTAssertEqual(listed[0]["filter"] as? String, "user_id=eq.\(lower(user.id))")
        let id = try XCTUnwrap(listed[0]["id"] as? Int)
        let system = try XCTUnwrap(socket.next("system")?["payload"] as? [String: Any])
        XCTAssertEqual(system["status"] as? String, "ok")
        XCTAssertEqual(system["extension"] as? String, "postgres_changes")

        // Another user's favorite first: the next change this socket sees is its own user's.
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[1]))", headers: other.authorization).status, 201)
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        let message = try XCTUnwrap(socket.next("postgres_changes"))
        XCTAssertEqual(message["topic"] as? String, "realtime:favorites")
        let payload = try XCTUnwrap(message["payload"] as? [String: Any])
        XCTAssertEqual(payload["ids"] as? [Int], [id])
        let insert = try XCTUnwrap(payload["data"] as? [String: Any])
        XCTAssertEqual(insert["type"] as? String, "INSERT")
        XCTAssertEqual(insert["schema"] as? String, "public")
        XCTAssertEqual(insert["table"] as? String, "user_favorites")
        XCTAssertTrue(insert["errors"] is NSNull)
        XCTAssertTrue(parsesAsTimestamp(insert["commit_timestamp"] as? String))
        let columns = try XCTUnwrap(insert["columns"] as? [[String: Any]])
        XCTAssertEqual(columns.compactMap { $0["name"] as? String }, ["user_id", "quote_id", "created_at"])
        let record = try XCTUnwrap(insert["record"] as? [String: Any])
        XCTAssertEqual(record["quote_id"] as? String, lower(quotes[0]))
        XCTAssertEqual(record["user_id"] as? String, lower(user.id))

        let rest = try app.supabase(
            "POST", "/rest/v1/user_favorites", as: user,
            body: ["user_id": lower(user.id), "quote_id": lower(quotes[2])])
        XCTAssertEqual(rest.status, 201, rest.text)
        XCTAssertEqual((socket.nextChange()?["record"] as? [String: Any])?["quote_id"] as? String, lower(quotes[2]))

        XCTAssertEqual(
            try app.client.send("DELETE", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 204)
        let deleted = try XCTUnwrap(socket.nextChange())
        XCTAssertEqual(deleted["type"] as? String, "DELETE")
        XCTAssertNil(deleted["record"])
        XCTAssertEqual((deleted["old_record"] as? [String: Any])?["quote_id"] as? String, lower(quotes[0]))
        let restDelete = try app.supabase(
            "DELETE", "/rest/v1/user_favorites?user_id=eq.\(lower(user.id))&quote_id=eq.\(lower(quotes[2]))", as: user)
        XCTAssertEqual(restDelete.status, 204, restDelete.text)
        XCTAssertEqual(socket.nextChange()?["type"] as? String, "DELETE")

        // Unfiltered, a user still sees only their own rows.
        let unfiltered = try app.realtime()
        XCTAssertEqual(
            status(
                unfiltered.join("realtime:all", changes: favorites(of: user, filter: false), token: user.accessToken)),
            "ok")
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[2]))", headers: other.authorization).status, 201)
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[1]))", headers: user.authorization).status, 201)
        XCTAssertEqual((unfiltered.nextChange()?["record"] as? [String: Any])?["quote_id"] as? String, lower(quotes[1]))
    }

    func testFiltersSelectRowsAndUnknownOnesAreRefusedInTheReply() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two"])
        let socket = try app.realtime()
        let bad: [([String: Any], String)] = [
            (["event": "*", "schema": "public", "table": "users"], "table must be one of"),
            (["event": "*", "schema": "auth", "table": "user_favorites"], "only the public schema"),
            (["event": "TRUNCATE", "schema": "public", "table": "user_favorites"], "event must be"),
            (
                ["event": "*", "schema": "public", "table": "user_favorites", "filter": "quote_id=like.x"],
                "filter must be"
            ),
            (
                ["event": "*", "schema": "public", "table": "user_favorites", "filter": "password=eq.x"],
                "has no column"
            ),
        ]
        for (entry, expected) in bad {
            let reply = socket.join("realtime:bad", changes: [entry], token: user.accessToken)
            XCTAssertEqual(status(reply), "error", "\(entry)")
            XCTAssertTrue(reason(reply)?.contains(expected) == true, "\(reason(reply) ?? "nil")")
        }
        let changes: [[String: Any]] = [
            [
                "event": "INSERT", "schema": "public", "table": "user_favorites",
                "filter": "quote_id=eq.\(lower(quotes[1]))",
            ],
            [
                "event": "DELETE", "schema": "public", "table": "user_favorites",
                "filter": "quote_id=in.(\(lower(quotes[0])))",
            ],
        ]
        let reply = try XCTUnwrap(socket.join("realtime:some", changes: changes, token: user.accessToken))
        XCTAssertEqual(status(reply), "ok")
        let ids = ((reply["response"] as? [String: Any])?["postgres_changes"] as? [[String: Any]])?.compactMap {
            $0["id"] as? Int
        }
        XCTAssertEqual(ids?.count, 2)
        for quote in quotes {
            XCTAssertEqual(
                try app.client.send("PUT", "/v1/favorites/\(lower(quote))", headers: user.authorization).status, 201)
        }
        let inserted = try XCTUnwrap(socket.next("postgres_changes")?["payload"] as? [String: Any])
        XCTAssertEqual(inserted["ids"] as? [Int], [ids![0]])
        XCTAssertEqual(
            ((inserted["data"] as? [String: Any])?["record"] as? [String: Any])?["quote_id"] as? String,
            lower(quotes[1]))
        for quote in quotes.reversed() {
            XCTAssertEqual(
                try app.client.send("DELETE", "/v1/favorites/\(lower(quote))", headers: user.authorization).status, 204)
        }
        let deleted = try XCTUnwrap(socket.next("postgres_changes")?["payload"] as? [String: Any])
        XCTAssertEqual(deleted["ids"] as? [Int], [ids![1]])
        XCTAssertEqual(
            ((deleted["data"] as? [String: Any])?["old_record"] as? [String: Any])?["quote_id"] as? String,
            lower(quotes[0]))
        XCTAssertTrue(socket.staysQuiet(for: 0.5) { $0["event"] as? String != "postgres_changes" })
    }

    func testTheAnonKeySeesPublicTablesOnly() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let socket = try app.realtime()
        let changes: [[String: Any]] = [
            ["event": "*", "schema": "public", "table": "user_favorites"],
            ["event": "INSERT", "schema": "public", "table": "quotes"],
        ]
        XCTAssertEqual(status(socket.join("realtime:public", changes: changes)), "ok")
        let quotes = try await app.insertQuotes(["Fresh"])
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        let change = try XCTUnwrap(socket.nextChange())
        XCTAssertEqual(change["table"] as? String, "quotes")
        XCTAssertEqual((change["record"] as? [String: Any])?["text"] as? String, "Fresh")
        XCTAssertTrue(
            socket.staysQuiet(for: 0.5) { $0["event"] as? String != "postgres_changes" }, "no favorite for anon")
    }

    func testARefreshedTokenContinuesAndALogoutStopsDelivery() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two", "Three"])
        let socket = try app.realtime()
        XCTAssertEqual(
            status(socket.join("realtime:mine", changes: favorites(of: user), token: user.accessToken)), "ok")
        socket.push("realtime:mine", "access_token", ["access_token": try app.token(for: user, expiresIn: 7200)])
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        XCTAssertEqual((socket.nextChange()?["record"] as? [String: Any])?["quote_id"] as? String, lower(quotes[0]))

        XCTAssertEqual(try app.client.send("POST", "/v1/auth/logout", headers: user.authorization).status, 204)
        let system = try XCTUnwrap(socket.next("system"))
        XCTAssertEqual((system["payload"] as? [String: Any])?["status"] as? String, "error")
        XCTAssertEqual(socket.next("phx_close")?["topic"] as? String, "realtime:mine")
        let again = try await app.makeUser()
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[1]))", headers: again.authorization).status, 201)
        XCTAssertTrue(socket.staysQuiet(for: 0.5) { $0["event"] as? String != "postgres_changes" })
        // The ended session's token opens nothing any more.
        XCTAssertEqual(
            reason(socket.join("realtime:mine", changes: favorites(of: user), token: user.accessToken)), "Invalid token"
        )
    }

    func testDeletingTheAccountStopsDelivery() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let socket = try app.realtime()
        XCTAssertEqual(
            status(socket.join("realtime:mine", changes: favorites(of: user), token: user.accessToken)), "ok")
        let deleted = try app.client.send(
            "DELETE", "/v1/me", json: ["password": "unused-password"], headers: user.authorization)
        XCTAssertEqual(deleted.status, 204, deleted.text)
        XCTAssertEqual(
            socket.nextMessage {
                !($0["event"] as? String == "system"
                    && ($0["payload"] as? [String: Any])?["status"] as? String == "error")
            }?["topic"] as? String,
            "realtime:mine")
        XCTAssertEqual(socket.next("phx_close")?["topic"] as? String, "realtime:mine")
    }

    /// The entries of a deleted collection go by cascade, after the collection: their DELETEs still reach the
    /// owner (migration 0084), and no one else.
    func testEntriesDeletedWithTheirCollectionReachTheOwner() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let other = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One", "Two"])
        let entries: [[String: Any]] = [["event": "*", "schema": "public", "table": "collection_quotes"]]
        let socket = try app.realtime()
        XCTAssertEqual(status(socket.join("realtime:entries", changes: entries, token: user.accessToken)), "ok")
        let stranger = try app.realtime()
        XCTAssertEqual(status(stranger.join("realtime:entries", changes: entries, token: other.accessToken)), "ok")
        let collection = try await app.withConnection { connection in
            try connection.transaction { connection in
                let rows = try connection.query(
                    "INSERT INTO collections (user_id, name) VALUES (\(user.id), 'Doomed') RETURNING id")
                let id = try rows[rows.startIndex].decode("id", as: UUID.self)
                for quote in quotes {
                    try connection.query(
                        "INSERT INTO collection_quotes (collection_id, quote_id) VALUES (\(id), \(quote))")
                }
                return id
            }
        }
        for _ in quotes { XCTAssertEqual(socket.nextChange()?["type"] as? String, "INSERT") }

        let deleted = try app.supabase("DELETE", "/rest/v1/collections?id=eq.\(lower(collection))", as: user)
        XCTAssertEqual(deleted.status, 204, deleted.text)
        var gone: Set<String> = []
        for _ in quotes {
            let change = try XCTUnwrap(socket.nextChange())
            XCTAssertEqual(change["type"] as? String, "DELETE")
            XCTAssertEqual(change["table"] as? String, "collection_quotes")
            XCTAssertTrue(change["errors"] is NSNull)
            let old = try XCTUnwrap(change["old_record"] as? [String: Any])
            XCTAssertEqual(old["collection_id"] as? String, lower(collection))
            XCTAssertNotNil(old["added_at"] as? String, "the whole row, not only its key")
            gone.insert(try XCTUnwrap(old["quote_id"] as? String))
        }
        XCTAssertEqual(gone, Set(quotes.map(lower)))
        XCTAssertTrue(socket.staysQuiet(for: 0.5) { $0["event"] as? String != "postgres_changes" }, "each once")
        XCTAssertTrue(stranger.staysQuiet(for: 0.2) { $0["event"] as? String != "postgres_changes" })
    }

    func testAnExpiredTokenClosesTheChannelAndAnInvalidSwapToo() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let socket = try app.realtime()
        let shortLived = try app.token(for: user, expiresIn: 2)
        XCTAssertEqual(status(socket.join("realtime:brief", changes: favorites(of: user), token: shortLived)), "ok")
        XCTAssertEqual((socket.next("system")?["payload"] as? [String: Any])?["status"] as? String, "ok")
        let expired = try XCTUnwrap(
            socket.nextMessage(within: 15) {
                !($0["event"] as? String == "system"
                    && ($0["payload"] as? [String: Any])?["status"] as? String == "error")
            })
        XCTAssertEqual((expired["payload"] as? [String: Any])?["message"] as? String, "Token has expired")
        XCTAssertEqual(socket.next("phx_close")?["topic"] as? String, "realtime:brief")

        let other = try app.realtime()
        XCTAssertEqual(status(other.join("realtime:x", changes: favorites(of: user), token: user.accessToken)), "ok")
        other.push("realtime:x", "access_token", ["access_token": "not.a.token"])
        XCTAssertEqual(other.next("phx_close")?["topic"] as? String, "realtime:x")
    }
}

/// An RFC 3339 time with fractional seconds, as Realtime sends `commit_timestamp`.
func parsesAsTimestamp(_ text: String?) -> Bool {
    guard let text else { return false }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text) != nil
}
