import AuthJWT
import Foundation
import HTTPServer
import Logging
import PGClient
import QuoteVault
import Synchronization

/// The Realtime sockets of this instance and what reaches them: row changes from every instance (migration
/// 0082's notifications on `realtime_changes`, one dedicated listening connection), session ends (0080's on
/// `library_changes`), broadcasts and presence between the sockets joined to a topic.
///
/// A change goes only to sockets that may read the row, decided in memory from the row's owner: the sockets of
/// that user (and of the service role) for a private table, every socket for a public one. A broadcast reaches
/// this instance's sockets at once and the others' through the same channel (`pg_notify`, marked with this
/// instance's id so that it does not come back); presence stays within this instance.
public final class RealtimeHub: Sendable {
    private struct State {
        var sockets: [ObjectIdentifier: RealtimeSocket] = [:]
        var byAddress: [String: Int] = [:]
        var byUser: [UUID: Set<ObjectIdentifier>] = [:]
        var serviceRole: Set<ObjectIdentifier> = []
        var topics: [String: Set<ObjectIdentifier>] = [:]
        /// Per topic, per socket: its presence key and meta.
        var presence: [String: [ObjectIdentifier: (key: String, meta: JSONValue)]] = [:]
        /// Users whose sockets' sessions are being checked now, and those notified again meanwhile.
        var checking: Set<UUID> = []
        var checkAgain: Set<UUID> = []
        /// Addresses a socket of which was closed for its message rate, and when: their new sockets start
        /// without the burst allowance for `ratePenalty`.
        var closedForRate: [String: ContinuousClock.Instant] = [:]
    }

    /// How long an address whose socket was closed for its message rate gets no burst on a new socket.
    static let ratePenalty: Duration = .seconds(10)

    public let limits: RealtimeLimits
    /// Counters for `/metrics`.
    public let metrics = RealtimeMetrics()
    let keys: RealtimeKeys
    let authenticator: Authenticator
    /// Where broadcasts are notified to the other instances.
    private let pool: PGPool
    /// Tells this instance's own broadcast notifications from the others'.
    private let instance = UUID().uuidString
    private let logger: Logger
    private let state = Mutex(State())
    private let listeners = Mutex<[PGListener]>([])
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    public static let changesChannel = "realtime_changes"
    public static let sessionsChannel = "library_changes"

    init(limits: RealtimeLimits, keys: RealtimeKeys, authenticator: Authenticator, pool: PGPool, logger: Logger) {
        self.limits = limits
        self.keys = keys
        self.authenticator = authenticator
        self.pool = pool
        self.logger = logger
    }

    /// Listens for changes and session ends on `databaseURL`, and starts looking for expired tokens.
    public func start(databaseURL: String) {
        let changes = PGListener(
            connectionString: databaseURL, channel: Self.changesChannel, logger: logger,
            onNotification: { [weak self] payload in
                guard let self else { return }
                if let change = RealtimeChange(notification: payload) {
                    self.deliver(change)
                } else {
                    self.relay(payload)
                }
            }, onReconnect: {}, onLost: { [weak self] in self?.changesInterrupted() },
            onListening: { [weak self] in self?.changesResumed() })
        let sessions = PGListener(
            connectionString: databaseURL, channel: Self.sessionsChannel, logger: logger,
            onNotification: { [weak self] payload in
                guard let self, let userID = UUID(uuidString: payload) else { return }
                self.checkSessions(of: userID)
            },
            onReconnect: { [weak self] in self?.checkEverySession() })
        changes.start()
        sessions.start()
        listeners.withLock { $0 = [changes, sessions] }
        let interval = limits.expiryCheck
        sweeper.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    self?.revokeExpired()
                }
            }
        }
    }

    public func stop() {
        for listener in listeners.withLock({ $0 }) { listener.stop() }
        sweeper.withLock { $0?.cancel() }
    }

    /// Whether both listening connections' threads still run (for shutdown).
    public var isListening: Bool { listeners.withLock { $0.contains(where: \.isRunning) } }

    /// Sockets open now.
    public var openSockets: Int { state.withLock { $0.sockets.count } }

    /// Whether changes are flowing now: the changes listener is connected to PostgreSQL.
    var isReceivingChanges: Bool { listeners.withLock { $0.first?.backendPID ?? 0 } != 0 }

    /// The Realtime part of `/metrics` (Prometheus text).
    public func exposition() -> String {
        let sockets = state.withLock { Array($0.sockets.values) }
        var kinds: [String: Int] = ["all": 0, "postgres_changes": 0, "presence": 0]
        for socket in sockets {
            for (kind, count) in socket.channelKinds { kinds[kind, default: 0] += count }
        }
        return metrics.exposition(
            sockets: sockets.count, channels: kinds.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            listening: isReceivingChanges)
    }

    // MARK: sockets

    /// A socket for a handshake from `address`, or nil past the per-address limit.
    func open(version: PhoenixVersion, caller: RealtimeCaller, address: String) -> RealtimeSocket? {
        let penalized = state.withLock { state in
            state.closedForRate[address].map { ContinuousClock.now - $0 < Self.ratePenalty } ?? false
        }
        let socket = RealtimeSocket(version: version, caller: caller, address: address, hub: self, burst: !penalized)
        let admitted = state.withLock { state -> Bool in
            guard state.byAddress[address, default: 0] < limits.connectionsPerAddress else {
                metrics.count(.connectionsPerAddress)
                return false
            }
            state.byAddress[address, default: 0] += 1
            state.sockets[socket.id] = socket
            return true
        }
        guard admitted else { return nil }
        _ = change(socket, to: caller)
        return socket
    }

    /// A socket from `address` was closed for sending too fast (see `ratePenalty`).
    func closedForRate(_ address: String) {
        state.withLock { state in
            let now = ContinuousClock.now
            state.closedForRate = state.closedForRate.filter { now - $0.value < Self.ratePenalty }
            state.closedForRate[address] = now
        }
    }

    func remove(_ socket: RealtimeSocket) {
        state.withLock { state in
            guard state.sockets.removeValue(forKey: socket.id) != nil else { return }
            let left = state.byAddress[socket.address, default: 1] - 1
            state.byAddress[socket.address] = left > 0 ? left : nil
            unindex(socket.id, caller: socket.caller, in: &state)
        }
    }

    /// Makes `caller` the socket's; false (nothing changed) when that would take a user past its limit.
    func change(_ socket: RealtimeSocket, to caller: RealtimeCaller) -> Bool {
        state.withLock { state in
            guard state.sockets[socket.id] != nil else { return false }
            if let user = caller.userID, user != socket.caller.userID,
                state.byUser[user, default: []].count >= limits.connectionsPerUser
            {
                metrics.count(.connectionsPerUser)
                return false
            }
            let previous = socket.exchangeCaller(caller)
            unindex(socket.id, caller: previous, in: &state)
            switch caller {
            case .user(let id, _, _): state.byUser[id, default: []].insert(socket.id)
            case .serviceRole: state.serviceRole.insert(socket.id)
            case .anonymous: break
            }
            return true
        }
    }

    private func unindex(_ id: ObjectIdentifier, caller: RealtimeCaller, in state: inout State) {
        switch caller {
        case .user(let user, _, _):
            state.byUser[user]?.remove(id)
            if state.byUser[user]?.isEmpty == true { state.byUser[user] = nil }
        case .serviceRole: state.serviceRole.remove(id)
        case .anonymous: break
        }
    }

    // MARK: changes

    private func deliver(_ change: RealtimeChange) {
        let candidates = state.withLock { state -> [RealtimeSocket] in
            if RealtimeSubscription.publicTables.contains(change.table) { return Array(state.sockets.values) }
            let ids = (change.owner.flatMap { state.byUser[$0] } ?? []).union(state.serviceRole)
            return ids.compactMap { state.sockets[$0] }
        }
        for socket in candidates {
            let sent = socket.deliver(change)
            metrics.delivered(sent, delay: change.writtenAt.map { Date().timeIntervalSince($0) })
        }
    }

    /// The changes listener lost PostgreSQL: every channel with `postgres_changes` is told that changes may be
    /// missed (`system` with an error), so that its client refetches once they flow again.
    private func changesInterrupted() {
        metrics.listenerLost()
        for socket in state.withLock({ Array($0.sockets.values) }) { socket.changesInterrupted() }
    }

    /// Listening (at start, or again after a loss): channels joined meanwhile, which were told changes did not
    /// flow yet, are told they do (`system` ok).
    private func changesResumed() {
        for socket in state.withLock({ Array($0.sockets.values) }) { socket.changesResumed() }
    }

    // MARK: sessions

    /// One of the user's sessions may have ended (logout, password change, console, account deletion): its
    /// sockets are checked with one query.
    /// Notifications for a user that arrive while its sockets are being checked are answered by one more check,
    /// not one each (every write to the user's library notifies too).
    private func checkSessions(of userID: UUID) {
        let start = state.withLock { state -> Bool in
            guard state.byUser[userID] != nil else { return false }
            guard !state.checking.contains(userID) else {
                state.checkAgain.insert(userID)
                return false
            }
            state.checking.insert(userID)
            return true
        }
        guard start else { return }
        Task {
            repeat {
                let sockets = state.withLock { state in
                    (state.byUser[userID] ?? []).compactMap { state.sockets[$0] }
                }
                await check(sockets)
            } while state.withLock { state in
                if state.checkAgain.remove(userID) != nil { return true }
                state.checking.remove(userID)
                return false
            }
        }
    }

    /// Notifications may have been missed while the listener reconnected.
    private func checkEverySession() {
        let sockets = state.withLock { state in state.byUser.values.flatMap { $0 }.compactMap { state.sockets[$0] } }
        Task { await self.check(sockets) }
    }

    private func check(_ sockets: [RealtimeSocket]) async {
        let sessions = sockets.compactMap { socket -> UUID? in
            if case .user(_, let session, _) = socket.caller { session } else { nil }
        }
        guard !sessions.isEmpty else { return }
        do {
            let live = try await authenticator.liveSessions(Array(Set(sessions)))
            for socket in sockets {
                if case .user(_, let session, _) = socket.caller, !live.contains(session) {
                    socket.revoke("Session ended")
                }
            }
        } catch {
            // The database cannot say now; the next notification or token expiry decides.
            logger.warning("realtime: could not check sessions", metadata: ["error": "\(error)"])
        }
    }

    private func revokeExpired() {
        let now = Int(Date().timeIntervalSince1970)
        let expired = state.withLock { state in
            state.byUser.values.flatMap { $0 }.compactMap { state.sockets[$0] }.filter {
                if case .user(_, _, let expires) = $0.caller { expires <= now } else { false }
            }
        }
        for socket in expired { socket.revoke("Token has expired") }
    }

    // MARK: topics: broadcast and presence

    func joined(_ topic: String, socket: RealtimeSocket) {
        state.withLock { state in
            // A join completed after its socket closed adds nothing.
            guard state.sockets[socket.id] != nil else { return }
            state.topics[topic, default: []].insert(socket.id)
        }
    }

    func left(_ topic: String, socket: RealtimeSocket) {
        state.withLock { state in
            state.topics[topic]?.remove(socket.id)
            if state.topics[topic]?.isEmpty == true { state.topics[topic] = nil }
        }
        untrack(topic, socket: socket)
    }

    private func members(of topic: String) -> [RealtimeSocket] {
        state.withLock { state in (state.topics[topic] ?? []).compactMap { state.sockets[$0] } }
    }

    /// The largest broadcast payload that can go to other instances (a notification takes at most 8,000 bytes);
    /// a binary one counts as its base64 text.
    static let broadcastLimit = 7_000

    func broadcast(topic: String, _ broadcast: RealtimeBroadcast, from sender: RealtimeSocket, includingSender: Bool) {
        for socket in members(of: topic) where includingSender || socket !== sender {
            socket.send(broadcast, topic: topic)
        }
        let notice = broadcast.notice(origin: instance, topic: topic)
        let pool = self.pool
        let logger = self.logger
        let metrics = self.metrics
        Task {
            do {
                _ = try await pool.query("SELECT pg_notify(\(Self.changesChannel), \(notice))")
            } catch {
                metrics.dropped(.broadcastNotNotified)
                logger.warning(
                    "realtime: a broadcast did not reach the other instances", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Another instance's broadcast, for this instance's sockets joined to its topic.
    private func relay(_ notification: String) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(notification.utf8)),
            let origin = value["origin"]?.stringValue, let topic = value["topic"]?.stringValue,
            let broadcast = RealtimeBroadcast(notice: value)
        else { return metrics.dropped(.unreadableNotification) }
        guard origin != instance else { return }
        for socket in members(of: topic) { socket.send(broadcast, topic: topic) }
    }

    /// Everyone present in `topic`: `{key: {metas: [meta, …]}}`.
    func presenceState(_ topic: String) -> String {
        let entries = state.withLock { Array(($0.presence[topic] ?? [:]).values) }
        var byKey: [String: [JSONValue]] = [:]
        for (key, meta) in entries { byKey[key, default: []].append(meta) }
        return PhoenixMessage.json(.object(byKey.mapValues { .object(["metas": .array($0)]) }))
    }

    func track(_ topic: String, key: String, meta: JSONValue, socket: RealtimeSocket) {
        var stamped: [String: JSONValue] = if case .object(let fields) = meta { fields } else { [:] }
        stamped["phx_ref"] = .string(String(UInt64.random(in: 0...UInt64.max), radix: 36))
        let previous = state.withLock { state in
            defer { state.presence[topic, default: [:]][socket.id] = (key, .object(stamped)) }
            return state.presence[topic]?[socket.id]
        }
        sendDiff(topic, joins: [(key, .object(stamped))], leaves: previous.map { [$0] } ?? [])
    }

    func untrack(_ topic: String, socket: RealtimeSocket) {
        let previous = state.withLock { state in
            defer { if state.presence[topic]?.isEmpty == true { state.presence[topic] = nil } }
            return state.presence[topic]?.removeValue(forKey: socket.id)
        }
        guard let previous else { return }
        sendDiff(topic, joins: [], leaves: [previous])
    }

    private func sendDiff(
        _ topic: String, joins: [(key: String, meta: JSONValue)], leaves: [(key: String, meta: JSONValue)]
    ) {
        func grouped(_ entries: [(key: String, meta: JSONValue)]) -> JSONValue {
            var byKey: [String: [JSONValue]] = [:]
            for (key, meta) in entries { byKey[key, default: []].append(meta) }
            return .object(byKey.mapValues { .object(["metas": .array($0)]) })
        }
        let payload = PhoenixMessage.json(.object(["joins": grouped(joins), "leaves": grouped(leaves)]))
        for socket in members(of: topic) { socket.send(topic: topic, event: "presence_diff", payload: payload) }
    }
}
