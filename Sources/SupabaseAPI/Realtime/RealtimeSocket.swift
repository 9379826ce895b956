import Foundation
import HTTPServer
import PGClient
import QuoteVault
import Synchronization

/// One client's `/realtime/v1/websocket`: the Phoenix channel protocol over its messages (joins, heartbeats,
/// leaves, token swaps, broadcast and presence), and the delivery of the changes its channels asked for.
///
/// Each channel has its own token, as in Supabase Realtime: the join's `access_token` (else the socket's API key),
/// replaced by an `access_token` message on that channel only. Expiry and session ends close only the channels
/// whose token it concerns.
final class RealtimeSocket: WebSocketHandler {
    struct Channel {
        /// Whose rows this channel may see, from its latest token.
        var caller: RealtimeCaller
        var joinRef: String?
        var subscriptions: [RealtimeSubscription]
        var broadcastSelf: Bool
        var broadcastAck: Bool
        /// Asked to be told (`system`) once changes flow.
        var replicationReady: Bool
        /// The key this socket's presence is tracked under (the config's, or one of its own).
        var presenceKey: String
        /// Whether presence was asked for at the join.
        var presence: Bool
        /// Told (`system` error) that changes do not flow now; told again when they do.
        var awaitingChanges = false
        var tracked = false
    }

    private struct State {
        var channels: [String: Channel] = [:]
        var nextSubscriptionID = 1
        /// Messages the client may still send now (refilled at `messagesPerSecond`, up to twice that).
        var allowance: Double
        var refilledAt = ContinuousClock.now
    }

    let version: PhoenixVersion
    let address: String
    /// The role of the API key the socket was opened with (what a null `access_token` falls back to).
    let keyCaller: RealtimeCaller
    private let hub: RealtimeHub
    private let state: Mutex<State>
    private let connection = Mutex<WebSocketConnection?>(nil)
    /// A close decided before the connection was attached.
    private let pendingClose = Mutex<(code: WebSocketCloseCode, reason: String)?>(nil)
    /// The presence key of a channel joined without one.
    let ownPresenceKey = UUID().uuidString.lowercased()

    /// - Parameter burst: whether the socket starts with its burst allowance (not for an address whose socket was
    ///   just closed for its rate: reconnecting must not buy a fresh burst).
    init(version: PhoenixVersion, caller: RealtimeCaller, address: String, hub: RealtimeHub, burst: Bool = true) {
        self.version = version
        self.address = address
        self.keyCaller = caller
        self.hub = hub
        self.state = Mutex(State(allowance: burst ? Double(hub.limits.messagesPerSecond * 2) : 0))
    }

    var id: ObjectIdentifier { ObjectIdentifier(self) }

    /// The sessions of the users' tokens its channels hold.
    var sessions: [UUID] {
        state.withLock { state in
            state.channels.values.compactMap { if case .user(_, let session, _) = $0.caller { session } else { nil } }
        }
    }

    /// Tells the hub whose channels `channels` are (called holding the state's lock, before they become the
    /// socket's); false when that would take a user past its socket limit.
    private func indexed(_ channels: [String: Channel]) -> Bool {
        let users = Set(channels.values.compactMap(\.caller.userID))
        let serviceRole = channels.values.contains { $0.caller == .serviceRole }
        let expiries = Set(
            channels.values.compactMap { if case .user(_, _, let expires) = $0.caller { expires } else { nil } })
        return hub.index(self, users: users, serviceRole: serviceRole, expiries: expiries)
    }

    func attach(_ connection: WebSocketConnection) {
        let closing = self.connection.withLock { held in
            held = connection
            return pendingClose.withLock { $0 }
        }
        if let closing { connection.close(closing.code, reason: closing.reason) }
    }

    /// Closes the socket by the server's decision: now, or as soon as it is attached.
    func close(_ code: WebSocketCloseCode, reason: String) {
        let connection = self.connection.withLock { held in
            if held == nil { pendingClose.withLock { $0 = (code, reason) } }
            return held
        }
        connection?.close(code, reason: reason)
    }

    // MARK: WebSocketHandler

    func received(text: String, on connection: WebSocketConnection) {
        hub.metrics.receivedMessage()
        guard withinRate() else { return closeForRate(connection) }
        guard let message = PhoenixMessage.decode(text, version: version) else {
            return connection.close(.invalidPayload, reason: "not a Phoenix message of vsn \(version.rawValue)")
        }
        handle(message)
    }

    /// vsn 2.0.0's binary broadcast push (kind 3): `[3, join_ref, ref, topic, event, meta lengths, encoding]`
    /// then the fields, then the payload.
    func received(binary: [UInt8], on connection: WebSocketConnection) {
        hub.metrics.receivedMessage()
        guard withinRate() else { return closeForRate(connection) }
        guard binary.count >= 7, binary[0] == 3 else {
            return connection.close(.unsupportedData, reason: "unknown binary message")
        }
        let lengths = binary[1...5].map(Int.init)
        var offset = 7
        var fields: [String] = []
        for length in lengths {
            guard offset + length <= binary.count else {
                return connection.close(.invalidPayload, reason: "binary message too short")
            }
            fields.append(String(decoding: binary[offset..<offset + length], as: UTF8.self))
            offset += length
        }
        let payload = Array(binary[offset...])
        let push = PhoenixMessage(
            joinRef: fields[0].isEmpty ? nil : fields[0], ref: fields[1].isEmpty ? nil : fields[1],
            topic: fields[2], event: "broadcast", payload: .object([:]))
        switch binary[6] {
        case 0:
            send(.binary(event: fields[3], bytes: payload), for: push)
        case 1:
            guard let json = try? JSONValue(jsonBytes: payload) else {
                return connection.close(.invalidPayload, reason: "the broadcast payload is not JSON")
            }
            var message = push
            message.payload = .object(["type": .string("broadcast"), "event": .string(fields[3]), "payload": json])
            handle(message)
        default:
            connection.close(.unsupportedData, reason: "unknown broadcast payload encoding")
        }
    }

    func closed(_ connection: WebSocketConnection) {
        let topics = state.withLock { state -> [String] in
            defer { state.channels = [:] }
            return Array(state.channels.keys)
        }
        for topic in topics { hub.left(topic, socket: self) }
        hub.remove(self)
        if let reason = Self.reason(connection.end) { hub.metrics.count(reason) }
    }

    /// Why the server closed a socket, for the metrics (nil: the client closed it, or it failed).
    private static func reason(_ end: WebSocketEnd?) -> RealtimeMetrics.Reason? {
        switch end {
        case nil: nil
        case .slowConsumer?: .slowConsumer
        case .idle?: .idle
        case .shutdown?: .shutdown
        case .closed(let code, _)?:
            switch code {
            case .policyViolation: .messageRate
            case .messageTooBig: .oversize
            case .protocolError, .unsupportedData, .invalidPayload: .protocolError
            default: nil
            }
        }
    }

    /// Channels joined now, by what they use: `all`, `postgres_changes`, `presence` (for the metrics).
    var channelKinds: [(kind: String, count: Int)] {
        state.withLock { state in
            [
                ("all", state.channels.count),
                ("postgres_changes", state.channels.values.filter { !$0.subscriptions.isEmpty }.count),
                ("presence", state.channels.values.filter(\.presence).count),
            ]
        }
    }

    // MARK: the protocol

    private func closeForRate(_ connection: WebSocketConnection) {
        hub.closedForRate(address)
        connection.close(.policyViolation, reason: "too many messages")
    }

    private func withinRate() -> Bool {
        let rate = Double(hub.limits.messagesPerSecond)
        return state.withLock { state in
            let now = ContinuousClock.now
            let elapsed = now - state.refilledAt
            state.refilledAt = now
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            state.allowance = min(rate * 2, state.allowance + seconds * rate)
            guard state.allowance >= 1 else { return false }
            state.allowance -= 1
            return true
        }
    }

    private func handle(_ message: PhoenixMessage) {
        if message.topic == "phoenix" {
            guard message.event == "heartbeat" else { return replyError(message, "unknown event") }
            return reply(message, status: "ok", response: "{}")
        }
        switch message.event {
        case "phx_join": join(message)
        case "phx_leave": leave(message)
        case "access_token": swapToken(message)
        case "broadcast": broadcast(message)
        case "presence": presence(message)
        default:
            guard joined(message.topic) else { return replyError(message, "unmatched topic") }
            replyError(message, "unknown event \(message.event)")
        }
    }

    private func joined(_ topic: String) -> Bool { state.withLock { $0.channels[topic] != nil } }

    private func join(_ message: PhoenixMessage) {
        guard message.topic.hasPrefix("realtime:"), message.topic.count > "realtime:".count else {
            return replyError(message, "unmatched topic")
        }
        let full = state.withLock { state in
            state.channels[message.topic] == nil && state.channels.count >= hub.limits.channelsPerConnection
        }
        guard !full else {
            hub.metrics.count(.channelsPerConnection)
            return replyError(message, "too many channels on this connection (\(hub.limits.channelsPerConnection))")
        }
        let config: RealtimeJoinConfig
        do {
            config = try RealtimeJoinConfig.parse(message.payload["config"])
        } catch {
            return replyError(message, error.reason)
        }
        var subscriptions: [RealtimeSubscription] = []
        let entries = config.changes
        let firstID = state.withLock { state in
            defer { state.nextSubscriptionID += entries.count }
            return state.nextSubscriptionID
        }
        for (index, entry) in entries.enumerated() {
            do {
                subscriptions.append(try RealtimeSubscription.parse(entry, id: firstID + index))
            } catch {
                return replyError(message, error.reason)
            }
        }
        let presenceWanted = config.presenceEnabled || !config.presenceKey.isEmpty
        let channel = Channel(
            caller: keyCaller, joinRef: message.joinRef ?? message.ref, subscriptions: subscriptions,
            broadcastSelf: config.broadcastSelf, broadcastAck: config.broadcastAck,
            replicationReady: config.replicationReady,
            presenceKey: config.presenceKey.isEmpty ? ownPresenceKey : config.presenceKey, presence: presenceWanted)
        guard let token = message.payload["access_token"]?.stringValue else {
            return admit(message, channel: channel, presence: presenceWanted)
        }
        authenticate(token, for: message) { caller in
            var channel = channel
            channel.caller = caller
            self.admit(message, channel: channel, presence: presenceWanted)
        }
    }

    /// Checks a presented token (its session live, for a user's): `then` runs with the caller; a refused token
    /// gets the error reply.
    private func authenticate(
        _ token: String, for message: PhoenixMessage, then: @escaping @Sendable (RealtimeCaller) -> Void
    ) {
        switch PresentedToken(token, keys: hub.keys) {
        case .key(let caller): then(caller)
        case .invalid(let reason): replyError(message, reason)
        case .accessToken(let claims):
            let hub = self.hub
            Task {
                do {
                    let user = try await hub.authenticator.live(claims)
                    then(.user(id: user.userID, session: user.sessionID, expires: claims.exp))
                } catch is PGError {
                    hub.metrics.count(.databaseUnavailable)
                    self.replyError(message, Self.databaseUnavailable)
                } catch {
                    self.replyError(message, "Invalid token")
                }
            }
        }
    }

    /// The reason of a join or token swap that needs the database while it does not answer.
    static let databaseUnavailable = "Unable to check the token: the database is unavailable, try again"

    private func admit(_ message: PhoenixMessage, channel: Channel, presence: Bool) {
        let admitted = state.withLock { state -> (Bool, replaced: Channel?) in
            var channels = state.channels
            let replaced = channels.updateValue(channel, forKey: message.topic)
            guard indexed(channels) else { return (false, nil) }
            state.channels = channels
            return (true, replaced)
        }
        guard admitted.0 else {
            return replyError(message, "too many connections for this user (\(hub.limits.connectionsPerUser))")
        }
        if admitted.replaced != nil { hub.left(message.topic, socket: self) }
        hub.joined(message.topic, socket: self)
        let list = PhoenixMessage.json(.array(channel.subscriptions.map(\.reply)))
        reply(message, status: "ok", response: #"{"postgres_changes":\#(list)}"#)
        let flowing = hub.isReceivingChanges
        if !flowing && (!channel.subscriptions.isEmpty || channel.replicationReady) {
            state.withLock { $0.channels[message.topic]?.awaitingChanges = true }
        }
        if !channel.subscriptions.isEmpty {
            sendSystem(
                topic: message.topic, joinRef: channel.joinRef, ok: flowing, extension: "postgres_changes",
                flowing ? Self.subscribed : Self.interrupted)
        }
        if channel.replicationReady && flowing {
            state.withLock { $0.channels[message.topic]?.replicationReady = false }
            sendSystem(
                topic: message.topic, joinRef: channel.joinRef, ok: true, extension: "system", Self.replicationReady)
        }
        if presence {
            send(
                topic: message.topic, event: "presence_state", payload: hub.presenceState(message.topic),
                joinRef: channel.joinRef)
        }
    }

    /// Takes `topic`'s channel off the socket (and its token off the hub's count), if it is there and `condition`
    /// holds for it.
    private func removeChannel(_ topic: String, if condition: (Channel) -> Bool = { _ in true }) -> Channel? {
        state.withLock { state in
            var channels = state.channels
            guard let channel = channels[topic], condition(channel) else { return nil }
            channels[topic] = nil
            _ = indexed(channels)  // fewer users: never refused
            state.channels = channels
            return channel
        }
    }

    private func leave(_ message: PhoenixMessage) {
        guard let channel = removeChannel(message.topic) else { return replyError(message, "unmatched topic") }
        hub.left(message.topic, socket: self)
        reply(message, status: "ok", response: "{}")
        send(topic: message.topic, event: "phx_close", payload: "{}", joinRef: channel.joinRef)
    }

    /// A refreshed token for this channel only: delivery continues under it (answered `ok`, which supabase-swift
    /// waits for on a channel with `ack`). A null token (signed out) falls back to the socket's API key. One that is
    /// invalid or expired closes the channel, as Realtime closes a channel whose token it refuses.
    private func swapToken(_ message: PhoenixMessage) {
        guard joined(message.topic) else { return replyError(message, "unmatched topic") }
        guard let token = message.payload["access_token"]?.stringValue else { return swap(message, to: keyCaller) }
        switch PresentedToken(token, keys: hub.keys) {
        case .key(let caller):
            swap(message, to: caller)
        case .invalid(let reason):
            replyError(message, reason)
            revoke(message.topic, reason: reason, counted: .invalidToken)
        case .accessToken(let claims):
            let hub = self.hub
            Task {
                let user: AuthenticatedUser
                do {
                    user = try await hub.authenticator.live(claims)
                } catch is PGError {
                    // The token cannot be checked now: the channels go on under the previous one (which still
                    // ends at its own expiry); the client may send it again.
                    hub.metrics.count(.databaseUnavailable)
                    return self.replyError(message, Self.databaseUnavailable)
                } catch {
                    self.replyError(message, "Invalid token")
                    return self.revoke(message.topic, reason: "Invalid token", counted: .invalidToken)
                }
                self.swap(message, to: .user(id: user.userID, session: user.sessionID, expires: claims.exp))
            }
        }
    }

    private func swap(_ message: PhoenixMessage, to caller: RealtimeCaller) {
        let swapped = state.withLock { state -> Bool? in
            guard state.channels[message.topic] != nil else { return nil }
            var channels = state.channels
            channels[message.topic]?.caller = caller
            guard indexed(channels) else { return false }
            state.channels = channels
            return true
        }
        switch swapped {
        case nil: break  // left meanwhile
        case true?: reply(message, status: "ok", response: "{}")
        case false?:
            let reason = "too many connections for this user (\(hub.limits.connectionsPerUser))"
            replyError(message, reason)
            revoke(message.topic, reason: reason, counted: nil)  // counted by the hub
        }
    }

    private func broadcast(_ message: PhoenixMessage) {
        guard joined(message.topic) else { return replyError(message, "unmatched topic") }
        guard message.payload["event"]?.stringValue != nil else { return replyError(message, "event is missing") }
        send(.json(PhoenixMessage.json(message.payload)), for: message)
    }

    /// Relays a client's broadcast (the push `message`, for its topic and reply) to the topic's sockets.
    private func send(_ broadcast: RealtimeBroadcast, for message: PhoenixMessage) {
        guard let channel = state.withLock({ $0.channels[message.topic] }) else {
            return replyError(message, "unmatched topic")
        }
        guard broadcast.noticeSize <= RealtimeHub.broadcastLimit else {
            let limit =
                if case .binary = broadcast { RealtimeHub.broadcastLimit / 4 * 3 } else { RealtimeHub.broadcastLimit }
            return replyError(message, "a broadcast payload takes at most \(limit) bytes")
        }
        // The acknowledgement first: a sender with `self` then hears its own message after it, as from Realtime.
        if channel.broadcastAck { reply(message, status: "ok", response: "{}") }
        hub.broadcast(topic: message.topic, broadcast, from: self, includingSender: channel.broadcastSelf)
    }

    private func presence(_ message: PhoenixMessage) {
        guard let channel = state.withLock({ $0.channels[message.topic] }) else {
            return replyError(message, "unmatched topic")
        }
        switch message.payload["event"]?.stringValue {
        case "track":
            let meta = message.payload["payload"] ?? .object([:])
            guard PhoenixMessage.json(meta).utf8.count <= RealtimeHub.presenceLimit else {
                return replyError(message, "a presence payload takes at most \(RealtimeHub.presenceLimit) bytes")
            }
            let names =
                PhoenixMessage.jsonString(message.topic).utf8.count
                + PhoenixMessage.jsonString(channel.presenceKey).utf8.count
            guard names <= RealtimeHub.presenceNameLimit else {
                return replyError(
                    message, "a topic and presence key take at most \(RealtimeHub.presenceNameLimit) bytes together")
            }
            state.withLock { $0.channels[message.topic]?.tracked = true }
            reply(message, status: "ok", response: "{}")
            hub.track(message.topic, key: channel.presenceKey, meta: meta, socket: self)
        case "untrack":
            state.withLock { $0.channels[message.topic]?.tracked = false }
            reply(message, status: "ok", response: "{}")
            hub.untrack(message.topic, socket: self)
        default:
            replyError(message, "presence event must be track or untrack")
        }
    }

    // MARK: delivery

    /// Sends `change` on each channel with subscriptions that match it, if the caller may read the row: one
    /// message per distinct `select` among them (as Realtime does), with the ids of those that share it. The
    /// number of messages sent.
    @discardableResult
    func deliver(_ change: RealtimeChange) -> Int {
        let frames = state.withLock { state -> [String] in
            state.channels.flatMap { topic, channel -> [String] in
                guard channel.caller.mayRead(table: change.table, owner: change.owner) else { return [] }
                let matching = channel.subscriptions.filter {
                    $0.matches(table: change.table, type: change.type, row: change.row)
                }
                return Dictionary(grouping: matching, by: \.columns).map { columns, subscriptions in
                    let ids = subscriptions.map { String($0.id) }.joined(separator: ",")
                    let payload = #"{"ids":[\#(ids)],"data":\#(change.data(selecting: columns))}"#
                    return PhoenixMessage.encode(
                        topic: topic, event: "postgres_changes", payload: payload, version: version)
                }
            }
        }
        guard !frames.isEmpty, let connection = connection.withLock({ $0 }) else { return 0 }
        let sent = frames.reduce(0) { $0 + (connection.send(text: $1) ? 1 : 0) }
        if sent < frames.count { hub.metrics.dropped(.socketRefused, frames.count - sent) }
        return sent
    }

    static let subscribed = "Subscribed to PostgreSQL"
    static let interrupted = "PostgreSQL is unavailable: changes are not delivered until it is back; refetch then"
    static let replicationReady = "Replication connection established"

    /// The database is gone: each channel with `postgres_changes` is told changes may be missed.
    func changesInterrupted() {
        let channels = state.withLock { state in
            let told = state.channels.filter { !$0.value.subscriptions.isEmpty }
            for topic in told.keys { state.channels[topic]?.awaitingChanges = true }
            return told
        }
        for (topic, channel) in channels {
            sendSystem(
                topic: topic, joinRef: channel.joinRef, ok: false, extension: "postgres_changes", Self.interrupted)
        }
    }

    /// Changes flow again: each channel with `postgres_changes` is told (its client refetches what it missed), and
    /// one that asked for `replication_ready` hears it now.
    func changesResumed() {
        let channels = state.withLock { state -> [String: Channel] in
            let waiting = state.channels.filter(\.value.awaitingChanges)
            for topic in waiting.keys {
                state.channels[topic]?.awaitingChanges = false
                state.channels[topic]?.replicationReady = false
            }
            return waiting
        }
        for (topic, channel) in channels {
            if !channel.subscriptions.isEmpty {
                sendSystem(
                    topic: topic, joinRef: channel.joinRef, ok: true, extension: "postgres_changes", Self.subscribed)
            }
            if channel.replicationReady {
                sendSystem(topic: topic, joinRef: channel.joinRef, ok: true, extension: "system", Self.replicationReady)
            }
        }
    }

    /// Realtime's `system` message: `{status, message, extension, channel}`.
    private func sendSystem(topic: String, joinRef: String?, ok: Bool, extension: String, _ text: String) {
        let system: JSONValue = .object([
            "status": .string(ok ? "ok" : "error"), "message": .string(text), "extension": .string(`extension`),
            "channel": .string(String(topic.dropFirst("realtime:".count))),
        ])
        send(topic: topic, event: "system", payload: PhoenixMessage.json(system), joinRef: joinRef)
    }

    /// Closes the channels whose user's token `ends` (its session, its expiry): each is told (`system` with an
    /// error, then `phx_close`); the socket and its other channels continue.
    func revokeChannels(
        reason: String, counted: RealtimeMetrics.Reason, where ends: (_ token: (session: UUID, expires: Int)) -> Bool
    ) {
        func ending(_ channel: Channel) -> Bool {
            if case .user(_, let session, let expires) = channel.caller { ends((session, expires)) } else { false }
        }
        let topics = state.withLock { state in state.channels.filter { ending($0.value) }.map(\.key) }
        // Checked again as each is taken: its token may have been swapped meanwhile.
        for topic in topics { revoke(topic, reason: reason, counted: counted, if: ending) }
    }

    /// Closes one channel: `system` with the error, then `phx_close`; `counted` in the metrics, if given.
    private func revoke(
        _ topic: String, reason: String, counted: RealtimeMetrics.Reason?,
        if condition: (Channel) -> Bool = { _ in true }
    ) {
        guard let channel = removeChannel(topic, if: condition) else { return }
        if let counted { hub.metrics.count(counted) }
        hub.left(topic, socket: self)
        sendSystem(topic: topic, joinRef: channel.joinRef, ok: false, extension: "system", reason)
        send(topic: topic, event: "phx_close", payload: "{}", joinRef: channel.joinRef)
    }

    /// A broadcast in this socket's serializer (a binary one skips a vsn 1.0.0 socket).
    func send(_ broadcast: RealtimeBroadcast, topic: String) {
        switch (broadcast, version) {
        case (.json(let payload), _): send(topic: topic, event: "broadcast", payload: payload)
        case (.binary(let event, let bytes), .v2):
            guard let frame = RealtimeBroadcast.userBroadcastFrame(topic: topic, event: event, bytes: bytes) else {
                return counted(false)
            }
            counted(connection.withLock { $0 }?.send(binary: frame))
        case (.binary, .v1): hub.metrics.dropped(.binaryForVersionOne)
        }
    }

    func send(topic: String, event: String, payload: String, ref: String? = nil, joinRef: String? = nil) {
        let taken = connection.withLock { $0 }?.send(
            text: PhoenixMessage.encode(
                topic: topic, event: event, payload: payload, ref: ref, joinRef: joinRef, version: version))
        counted(taken)
    }

    private func counted(_ taken: Bool?) {
        if taken == true { hub.metrics.sentMessages() } else { hub.metrics.dropped(.socketRefused) }
    }

    private func reply(_ message: PhoenixMessage, status: String, response: String) {
        send(
            topic: message.topic, event: "phx_reply", payload: #"{"status":"\#(status)","response":\#(response)}"#,
            ref: message.ref, joinRef: message.joinRef)
    }

    private func replyError(_ message: PhoenixMessage, _ reason: String) {
        reply(message, status: "error", response: #"{"reason":\#(PhoenixMessage.jsonString(reason))}"#)
    }
}
