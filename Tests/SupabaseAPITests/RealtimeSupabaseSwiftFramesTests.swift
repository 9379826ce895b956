import Foundation
import TestSupport
import XCTest

/// The frames supabase-swift 2.55.1's `RealtimeClientV2` sends, as captured from the real client running the app's
/// flows against this server (its `JSONEncoder` escapes `/` and orders keys as it likes; `version` carries the
/// platform), replayed as it sends them with its default `vsn=2.0.0`, and the answers it decodes checked the way it
/// decodes them.
final class RealtimeSupabaseSwiftFramesTests: XCTestCase {
    /// A server message of the 2.0.0 serializer: `[join_ref, ref, topic, event, payload]`.
    private struct Message {
        let joinRef: String?
        let ref: String?
        let topic: String
        let event: String
        let payload: [String: Any]
    }

    private func next(_ socket: WebSocketTestClient, skipping skip: (Message) -> Bool = { _ in false }) -> Message? {
        while let frame = socket.nextFrame() {
            guard frame.opcode == 0x1,
                let array = try? JSONSerialization.jsonObject(with: Data(frame.payload)) as? [Any], array.count == 5,
                let topic = array[2] as? String, let event = array[3] as? String,
                let payload = array[4] as? [String: Any]
            else { return nil }
            let message = Message(
                joinRef: array[0] as? String, ref: array[1] as? String, topic: topic, event: event, payload: payload)
            if !skip(message) { return message }
        }
        return nil
    }

    /// `version` as supabase-swift 2.55.1 sent it on Linux (on iOS the platform part names iOS).
    private let version =
        #"supabase-swift\/2.55.1; platform=Linux; platform-version=Linux version 6.18.44; runtime=swift; runtime-version=6.3"#

    /// The join of a channel on the user's favorites, keys in the order the real client sent them.
    private func joinFrame(_ topic: String, joinRef: String = "1", filter: String, token: String) -> String {
        #"["\#(joinRef)","\#(joinRef)","\#(topic)","phx_join",{"config":{"broadcast":{"ack":false,"replication_ready":false,"self":false},"presence":{"key":"","enabled":false},"private":false,"postgres_changes":[{"filter":"\#(filter)","schema":"public","event":"*","table":"user_favorites"}]},"access_token":"\#(token)","version":"\#(version)"}]"#
    }

    func testAChannelOnTheUsersFavoritesAsSupabaseSwiftSubscribesRefreshesAndLeaves() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One"])
        // `realtimeWebSocketURL`: apikey, then vsn.
        let socket = try app.realtime(vsn: "2.0.0")
        XCTAssertEqual(socket.status, 101)
        let topic = "realtime:public:user_favorites"
        let filter = "user_id=eq.\(lower(user.id))"
        socket.send(text: joinFrame(topic, filter: filter, token: user.accessToken))
        let reply = try XCTUnwrap(next(socket))
        XCTAssertEqual([reply.joinRef, reply.ref, reply.topic, reply.event], ["1", "1", topic, "phx_reply"])
        XCTAssertEqual(reply.payload["status"] as? String, "ok")
        // `PostgresJoinConfig`: event, schema, table, filter and a non-zero id, matched against the join's.
        let server = try XCTUnwrap(
            (reply.payload["response"] as? [String: Any])?["postgres_changes"] as? [[String: Any]])
        XCTAssertEqual(server.count, 1)
        XCTAssertEqual(server[0]["event"] as? String, "*")
        XCTAssertEqual(server[0]["schema"] as? String, "public")
        XCTAssertEqual(server[0]["table"] as? String, "user_favorites")
        XCTAssertEqual(server[0]["filter"] as? String, filter)
        let id = try XCTUnwrap(server[0]["id"] as? Int)
        XCTAssertNotEqual(id, 0)
        let system = try XCTUnwrap(next(socket))
        XCTAssertEqual(system.event, "system")
        XCTAssertEqual(system.payload["status"] as? String, "ok")

        // `sendHeartbeat`: no join_ref, the next ref, an empty payload; the reply carries the ref back.
        socket.send(text: #"[null,"2","phoenix","heartbeat",{}]"#)
        let beat = try XCTUnwrap(next(socket))
        XCTAssertEqual([beat.topic, beat.event, beat.ref], ["phoenix", "phx_reply", "2"])

        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        let change = try XCTUnwrap(next(socket))
        XCTAssertEqual(change.event, "postgres_changes")
        XCTAssertEqual(change.payload["ids"] as? [Int], [id])
        // `PostgresActionData`: type, record, old_record, columns, commit_timestamp (a date it must parse).
        let data = try XCTUnwrap(change.payload["data"] as? [String: Any])
        XCTAssertEqual(data["type"] as? String, "INSERT")
        XCTAssertEqual((data["record"] as? [String: Any])?["quote_id"] as? String, lower(quotes[0]))
        XCTAssertEqual((data["columns"] as? [[String: Any]])?.count, 3)
        let stamp = try XCTUnwrap(data["commit_timestamp"] as? String)
        XCTAssertTrue(parsesAsTimestamp(stamp), stamp)

        // `setAuth`: on each subscribed channel, with the channel's join_ref.
        let refreshed = try app.token(for: user, expiresIn: 7200)
        socket.send(text: #"["1","3","\#(topic)","access_token",{"access_token":"\#(refreshed)"}]"#)
        let swapped = try XCTUnwrap(next(socket))
        XCTAssertEqual([swapped.event, swapped.ref], ["phx_reply", "3"])
        XCTAssertEqual(swapped.payload["status"] as? String, "ok")
        XCTAssertEqual(
            try app.client.send("DELETE", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 204)
        XCTAssertEqual((next(socket)?.payload["data"] as? [String: Any])?["type"] as? String, "DELETE")

        // `unsubscribe`: phx_leave; `phx_close` carries the join's join_ref, which the client checks.
        socket.send(text: #"["1","4","\#(topic)","phx_leave",{}]"#)
        XCTAssertEqual(next(socket)?.event, "phx_reply")
        let close = try XCTUnwrap(next(socket))
        XCTAssertEqual([close.event, close.joinRef], ["phx_close", "1"])
    }

    /// `signOut` emits `signedOut`, on which `SupabaseClient` calls `realtimeV2.setAuth(supabaseKey)`: each subscribed
    /// channel gets `access_token` with the anon key (`sb_publishable_…`, not a JWT). The channels stay, as anon: the
    /// user's rows stop while public tables still arrive.
    func testTheSignOutSwapToTheAnonKeyKeepsTheChannelsButStopsTheUsersRows() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One"])
        let socket = try app.realtime(vsn: "2.0.0")
        XCTAssertEqual(socket.status, 101)
        let favorites = "realtime:alice-favorites"
        socket.send(text: joinFrame(favorites, filter: "user_id=eq.\(lower(user.id))", token: user.accessToken))
        XCTAssertEqual(next(socket)?.payload["status"] as? String, "ok")
        XCTAssertEqual(next(socket)?.event, "system")
        let newQuotes = "realtime:new-quotes"
        socket.send(
            text:
                #"["2","2","\#(newQuotes)","phx_join",{"config":{"private":false,"postgres_changes":[{"schema":"public","event":"INSERT","table":"quotes"}],"presence":{"enabled":false,"key":""},"broadcast":{"self":false,"replication_ready":false,"ack":false}},"version":"\#(version)","access_token":"\#(user.accessToken)"}]"#
        )
        XCTAssertEqual(next(socket)?.payload["status"] as? String, "ok")
        XCTAssertEqual(next(socket)?.event, "system")

        socket.send(text: #"["1","3","\#(favorites)","access_token",{"access_token":"\#(app.anonKey)"}]"#)
        socket.send(text: #"["2","4","\#(newQuotes)","access_token",{"access_token":"\#(app.anonKey)"}]"#)
        for ref in ["3", "4"] {
            let reply = try XCTUnwrap(next(socket))
            XCTAssertEqual([reply.event, reply.ref], ["phx_reply", ref])
            XCTAssertEqual(reply.payload["status"] as? String, "ok")
        }

        // The user's favorite is committed before the quote: had it been sent, it would come first.
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        _ = try await app.insertQuotes(["Two"])
        let change = try XCTUnwrap(next(socket))
        XCTAssertEqual([change.topic, change.event], [newQuotes, "postgres_changes"])
        XCTAssertEqual(
            ((change.payload["data"] as? [String: Any])?["record"] as? [String: Any])?["text"] as? String, "Two")

        XCTAssertEqual(try app.client.send("POST", "/v1/auth/logout", headers: user.authorization).status, 204)
        socket.send(text: #"[null,"5","phoenix","heartbeat",{}]"#)
        let beat = try XCTUnwrap(next(socket) { $0.topic != "phoenix" })
        XCTAssertEqual([beat.event, beat.ref], ["phx_reply", "5"])
    }
}
