import Foundation
import QuoteVault

/// What the instances tell each other on `realtime_changes` besides row changes and broadcasts: their presences,
/// their users' socket counts and that they are alive (RealtimePeers says why). Each carries `origin`, the
/// sender's instance id, and `peer`, its kind.
enum RealtimePeerMessage: Sendable {
    /// The sender still runs (every `RealtimeLimits.peerHeartbeat`).
    case alive
    /// Asks for a re-announcement of everything the sender holds: from `to` (an instance heard of for the first
    /// time), or from everyone (nil, after the asker's listener reconnected); `nonce` is echoed by `synced`.
    case hello(to: String?, nonce: String?)
    /// A presence tracked in `topic`; `replaces` names the same socket's previous presence there.
    case track(topic: String, member: PresenceMember, replaces: String?)
    case untrack(topic: String, ref: String)
    /// The sender's sockets with a channel of `user` (0: none left).
    case sockets(user: UUID, count: Int)
    /// The end of a re-announcement asked for by the hello with `nonce`.
    case synced(nonce: String)
    /// The sender stops: what it held is gone.
    case bye

    /// The notification's payload.
    func encoded(origin: String) -> String {
        var fields: [String: JSONValue] = ["origin": .string(origin)]
        switch self {
        case .alive:
            fields["peer"] = .string("alive")
        case .hello(let to, let nonce):
            fields["peer"] = .string("hello")
            if let to { fields["to"] = .string(to) }
            if let nonce { fields["nonce"] = .string(nonce) }
        case .track(let topic, let member, let replaces):
            fields["peer"] = .string("track")
            fields["topic"] = .string(topic)
            fields["key"] = .string(member.key)
            fields["meta"] = member.meta
            if let replaces { fields["replaces"] = .string(replaces) }
        case .untrack(let topic, let ref):
            fields["peer"] = .string("untrack")
            fields["topic"] = .string(topic)
            fields["ref"] = .string(ref)
        case .sockets(let user, let count):
            fields["peer"] = .string("sockets")
            fields["user"] = .string(user.uuidString.lowercased())
            fields["count"] = .number(Double(count))
        case .synced(let nonce):
            fields["peer"] = .string("synced")
            fields["nonce"] = .string(nonce)
        case .bye:
            fields["peer"] = .string("bye")
        }
        return PhoenixMessage.json(.object(fields))
    }

    /// A peer message and its origin, or nil for anything else (a broadcast, or a malformed message).
    static func decode(_ value: JSONValue) -> (origin: String, message: RealtimePeerMessage)? {
        guard let origin = value["origin"]?.stringValue, let kind = value["peer"]?.stringValue else { return nil }
        let message: RealtimePeerMessage
        switch kind {
        case "alive": message = .alive
        case "hello": message = .hello(to: value["to"]?.stringValue, nonce: value["nonce"]?.stringValue)
        case "track":
            guard let topic = value["topic"]?.stringValue, let key = value["key"]?.stringValue,
                let meta = value["meta"], meta["phx_ref"]?.stringValue != nil
            else { return nil }
            message = .track(
                topic: topic, member: PresenceMember(key: key, meta: meta), replaces: value["replaces"]?.stringValue)
        case "untrack":
            guard let topic = value["topic"]?.stringValue, let ref = value["ref"]?.stringValue else { return nil }
            message = .untrack(topic: topic, ref: ref)
        case "sockets":
            guard let user = value["user"]?.stringValue.flatMap(UUID.init(uuidString:)),
                case .number(let count)? = value["count"], count >= 0, count < 1_000_000
            else { return nil }
            message = .sockets(user: user, count: Int(count))
        case "synced":
            guard let nonce = value["nonce"]?.stringValue else { return nil }
            message = .synced(nonce: nonce)
        case "bye": message = .bye
        default: return nil
        }
        return (origin, message)
    }
}
