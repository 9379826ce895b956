import AuthJWT
import Foundation
import TestSupport
import XCTest

/// What the Realtime tests share: a socket on `/realtime/v1/websocket` and the Phoenix messages of vsn 1.0.0.
extension TestApp {
    func realtime(
        key: String? = nil, vsn: String = "1.0.0", source: String? = nil, receiveBuffer: Int? = nil
    ) throws -> WebSocketTestClient {
        let apikey = key ?? anonKey
        return try WebSocketTestClient(
            port: application.port, path: "/realtime/v1/websocket?apikey=\(apikey)&vsn=\(vsn)", source: source,
            receiveBuffer: receiveBuffer)
    }

    /// An access token of `user`'s session that expires `seconds` from now (a refreshed one, or one about to end).
    func token(for user: TestUser, expiresIn seconds: Int) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let claims = AccessTokenClaims(
            sub: lower(user.id), sid: lower(user.sessionID), email: user.email, iat: now, exp: now + seconds,
            role: "authenticated")
        return try application.context.signer.sign(claims)
    }
}

extension WebSocketTestClient {
    private static let refs = Refs()

    final class Refs: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0

        func take() -> String {
            lock.lock()
            defer { lock.unlock() }
            next += 1
            return String(next)
        }
    }

    /// Sends a Phoenix message and returns its ref.
    @discardableResult
    func push(_ topic: String, _ event: String, _ payload: [String: Any] = [:], joinRef: String? = nil) -> String {
        let ref = Self.refs.take()
        send(json: ["topic": topic, "event": event, "payload": payload, "ref": ref, "join_ref": joinRef ?? ref])
        return ref
    }

    /// The `phx_reply` to `ref` (other messages in between are skipped).
    func reply(to ref: String) -> [String: Any]? {
        nextMessage { !($0["event"] as? String == "phx_reply" && $0["ref"] as? String == ref) }?["payload"]
            as? [String: Any]
    }

    /// Joins `topic` as supabase-py and supabase-swift do; the reply's payload.
    func join(
        _ topic: String, changes: [[String: Any]] = [], token: String? = nil, broadcast: [String: Any] = [:],
        presence: [String: Any] = ["key": ""]
    ) -> [String: Any]? {
        var payload: [String: Any] = [
            "config": [
                "broadcast": ["ack": false, "self": false].merging(broadcast) { $1 }, "presence": presence,
                "postgres_changes": changes, "private": false,
            ] as [String: Any]
        ]
        if let token { payload["access_token"] = token }
        return reply(to: push(topic, "phx_join", payload))
    }

    /// The next message of `event` (others skipped).
    func next(_ event: String, within seconds: Double = 10) -> [String: Any]? {
        nextMessage(within: seconds) { $0["event"] as? String != event }
    }

    /// The next `postgres_changes` message's `data`.
    func nextChange(within seconds: Double = 10) -> [String: Any]? {
        (next("postgres_changes", within: seconds)?["payload"] as? [String: Any])?["data"] as? [String: Any]
    }
}

func status(_ reply: [String: Any]?) -> String? { reply?["status"] as? String }

func reason(_ reply: [String: Any]?) -> String? { (reply?["response"] as? [String: Any])?["reason"] as? String }

extension TestApp {
    /// Waits (at most ~10 s) until the Realtime changes listener is connected (`realtime_listening 1` on
    /// `/metrics`): a join before it is told changes do not flow yet.
    func untilRealtimeListens() async throws {
        for _ in 0..<100 {
            if try client.get("/metrics").text.contains("\nrealtime_listening 1\n") { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTFail("the Realtime listener did not connect")
    }
}
