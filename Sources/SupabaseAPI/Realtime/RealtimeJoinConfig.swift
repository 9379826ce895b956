import QuoteVault

/// A `phx_join`'s `config`, every field supabase-swift 2.55.1 and supabase-py send: each is honoured or the join is
/// refused with the reason, never accepted and ignored.
///
/// - `broadcast.self`, `broadcast.ack`: honoured.
/// - `broadcast.replication_ready`: a `system` message once changes flow (at once, or when PostgreSQL is back).
/// - `broadcast.replay`: refused, as Realtime refuses it on a public channel (the only kind here).
/// - `presence.key`, `presence.enabled`: honoured.
/// - `postgres_changes`: parsed by `RealtimeSubscription` (its `select` included).
/// - `private`: `true` is refused (no channel policies here).
/// Keys neither client sends are ignored, as Realtime ignores them.
struct RealtimeJoinConfig: Sendable {
    var broadcastSelf = false
    var broadcastAck = false
    var replicationReady = false
    var presenceKey = ""
    var presenceEnabled = false
    var changes: [JSONValue] = []

    typealias Refusal = RealtimeSubscription.Refusal

    static func parse(_ config: JSONValue?) throws(Refusal) -> RealtimeJoinConfig {
        var parsed = RealtimeJoinConfig()
        guard let config, config != .null else { return parsed }
        guard case .object = config else { throw Refusal(reason: "config must be an object") }
        let broadcast = config["broadcast"]
        let presence = config["presence"]
        parsed.broadcastSelf = try flag(broadcast?["self"], "broadcast.self")
        parsed.broadcastAck = try flag(broadcast?["ack"], "broadcast.ack")
        parsed.replicationReady = try flag(broadcast?["replication_ready"], "broadcast.replication_ready")
        if let replay = broadcast?["replay"], replay != .null {
            throw Refusal(reason: "Replay is not allowed for public channels")
        }
        parsed.presenceEnabled = try flag(presence?["enabled"], "presence.enabled")
        switch presence?["key"] {
        case nil, .null?: break
        case .string(let key)?: parsed.presenceKey = key
        default: throw Refusal(reason: "config.presence.key must be a string")
        }
        if try flag(config["private"], "private") {
            throw Refusal(reason: "private channels are not available")
        }
        switch config["postgres_changes"] {
        case nil, .null?: break
        case .array(let entries)?: parsed.changes = entries
        default: throw Refusal(reason: "config.postgres_changes must be a list")
        }
        return parsed
    }

    private static func flag(_ value: JSONValue?, _ name: String) throws(Refusal) -> Bool {
        switch value {
        case nil, .null?: false
        case .bool(let flag)?: flag
        default: throw Refusal(reason: "config.\(name) must be true or false")
        }
    }
}
