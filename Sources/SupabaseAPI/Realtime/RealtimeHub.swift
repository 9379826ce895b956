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
/// instance's id so that it does not come back). Presences and each user's socket count cross instances the same
/// way, with a heartbeat lease for an instance that dies (RealtimePeers says why).
public final class RealtimeHub: Sendable {
    private struct State {
        var sockets: [ObjectIdentifier: RealtimeSocket] = [:]
        /// The sockets of each address.
        var byAddress: [String: Set<ObjectIdentifier>] = [:]
        /// The sockets with a channel of each user, and of the service role (as each socket last told `index`).
        var byUser: [UUID: Set<ObjectIdentifier>] = [:]
        var serviceRole: Set<ObjectIdentifier> = []
        /// Per socket, the users whose channels it has.
        var usersOf: [ObjectIdentifier: Set<UUID>] = [:]
        var topics: [String: Set<ObjectIdentifier>] = [:]
        /// Per topic, per socket: its presence.
        var presence: [String: [ObjectIdentifier: PresenceMember]] = [:]
        /// The other instances' presences and sockets.
        var peers = RealtimePeers()
        var lastAlive: ContinuousClock.Instant?
        /// Sockets by the expiries (`exp`, Unix seconds) of their channels' user tokens: the check each second
        /// takes out what has expired instead of looking at every socket. A socket whose channels have changed
        /// token or that has closed since is passed over when its entry comes out.
        var expiries = DeadlineQueue<Int, ObjectIdentifier>()
        /// Per socket, the expiries it has entries for.
        var expiriesOf: [ObjectIdentifier: Set<Int>] = [:]
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
    /// One check of a user's sessions at a time, and one more for the notifications that arrive meanwhile.
    private let sessionChecks = CoalescingRunner<UUID>()
    private let listeners = Mutex<[PGListener]>([])
    private let sweeper = Mutex<Task<Void, Never>?>(nil)
    /// This instance's messages to the others, in order (from `start`).
    private let announcer = Mutex<RealtimeAnnouncer?>(nil)

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
                    self.received(payload)
                }
            }, onReconnect: { [weak self] in self?.askEveryPeer() },
            onLost: { [weak self] in self?.changesInterrupted() },
            onListening: { [weak self] in self?.changesResumed() })
        let sessions = PGListener(
            connectionString: databaseURL, channel: Self.sessionsChannel, logger: logger,
            onNotification: { [weak self] payload in
                guard let self, let userID = UUID(uuidString: payload) else { return }
                self.checkSessions(of: userID)
            },
            onReconnect: { [weak self] in self?.checkEverySession() })
        announcer.withLock {
            $0 = RealtimeAnnouncer(
                pool: pool, channel: Self.changesChannel, logger: logger,
                onRecovered: { [weak self] in self?.announceAgain() })
        }
        changes.start()
        sessions.start()
        listeners.withLock { $0 = [changes, sessions] }
        let interval = limits.expiryCheck
        sweeper.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled {
                    self?.keepPeersInformed()
                    try? await Task.sleep(for: interval)
                    self?.revokeExpired()
                }
            }
        }
    }

    /// Stops listening; the other instances are told that this one's presences and sockets are gone.
    public func stop() {
        state.withLock { _ in announce(.bye) }
        announcer.withLock { $0?.finish() }
        for listener in listeners.withLock({ $0 }) { listener.stop() }
        sweeper.withLock { $0?.cancel() }
    }

    /// Whether both listening connections' threads still run (for shutdown).
    public var isListening: Bool { listeners.withLock { $0.contains(where: \.isRunning) } }

    /// The connection listening for changes, broadcasts and the other instances (for operators and tests).
    public var changesListener: PGListener? { listeners.withLock { $0.first } }

    /// Whether both listening connections are listening now (a change committed before that reaches no one).
    public var isConnected: Bool { listeners.withLock { !$0.isEmpty && $0.allSatisfy { $0.backendPID != 0 } } }

    /// Sockets open now.
    public var openSockets: Int { state.withLock { $0.sockets.count } }

    /// The sockets with a channel of `user` on every instance, as this one knows (for operators and tests).
    public func sockets(ofUser user: UUID) -> Int {
        state.withLock { $0.byUser[user, default: []].count + $0.peers.sockets(of: user) }
    }

    /// The other instances heard from within the lease.
    public var peerInstances: Int { state.withLock { $0.peers.count } }

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

    /// Why a handshake gets no socket.
    enum Refusal: Error {
        /// `address` holds `connectionsPerAddress` sockets already.
        case address
        /// The instance holds `sockets` in all, and no address holds more than this one would.
        case instance
    }

    /// A socket for a handshake from `address`. When the instance holds all the sockets it may, the newcomer takes
    /// the place of one from the address holding the most, if that address would still hold more than the
    /// newcomer's: sockets from many addresses end up shared evenly between them, and no address is starved.
    func open(version: PhoenixVersion, caller: RealtimeCaller, address: String) -> Result<RealtimeSocket, Refusal> {
        let penalized = state.withLock { state in
            state.closedForRate[address].map { ContinuousClock.now - $0 < Self.ratePenalty } ?? false
        }
        let socket = RealtimeSocket(version: version, caller: caller, address: address, hub: self, burst: !penalized)
        let admitted = state.withLock { state -> Result<RealtimeSocket?, Refusal> in
            let held = state.byAddress[address]?.count ?? 0
            guard held < limits.connectionsPerAddress else {
                metrics.count(.connectionsPerAddress)
                return .failure(.address)
            }
            var evicted: RealtimeSocket?
            if state.sockets.count >= limits.sockets {
                guard let victim = Self.victim(outweighing: held + 1, in: state) else {
                    metrics.count(.socketsPerInstance)
                    return .failure(.instance)
                }
                evicted = state.sockets[victim]
                forget(victim, in: &state)
            }
            state.byAddress[address, default: []].insert(socket.id)
            state.sockets[socket.id] = socket
            return .success(evicted)
        }
        return admitted.map { evicted in
            if let evicted {
                metrics.count(.madeRoom)
                evicted.close(.tryAgainLater, reason: "making room for other addresses")
            }
            return socket
        }
    }

    /// A socket of the address holding the most, if it holds more than `share` (nil: the sockets are shared
    /// evenly enough). Only looked for when the instance is full.
    private static func victim(outweighing share: Int, in state: State) -> ObjectIdentifier? {
        guard let heaviest = state.byAddress.max(by: { $0.value.count < $1.value.count }),
            heaviest.value.count > share
        else { return nil }
        return heaviest.value.first
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
        state.withLock { state in forget(socket.id, in: &state) }
    }

    /// Takes a socket out of every index (its place counts no more).
    private func forget(_ id: ObjectIdentifier, in state: inout State) {
        guard let socket = state.sockets.removeValue(forKey: id) else { return }
        state.byAddress[socket.address]?.remove(id)
        if state.byAddress[socket.address]?.isEmpty == true { state.byAddress[socket.address] = nil }
        reindex(id, users: [], serviceRole: false, in: &state)
        state.expiriesOf[id] = nil
    }

    /// Records whose channels `socket` has now (each channel has its own token); false, with nothing changed, when
    /// a user it did not have would go past the per-user limit, which counts the other instances' sockets too.
    /// The socket calls it holding its own lock (the hub never takes a socket's lock while holding its own).
    func index(_ socket: RealtimeSocket, users: Set<UUID>, serviceRole: Bool, expiries: Set<Int>) -> Bool {
        state.withLock { state in
            guard state.sockets[socket.id] != nil else { return users.isEmpty && !serviceRole }
            let added = users.subtracting(state.usersOf[socket.id] ?? [])
            for user in added
            where state.byUser[user, default: []].count + state.peers.sockets(of: user) >= limits.connectionsPerUser {
                metrics.count(.connectionsPerUser)
                return false
            }
            reindex(socket.id, users: users, serviceRole: serviceRole, in: &state)
            for expiry in expiries.subtracting(state.expiriesOf[socket.id] ?? []) {
                state.expiries.add(socket.id, at: expiry)
            }
            state.expiriesOf[socket.id] = expiries.isEmpty ? nil : expiries
            return true
        }
    }

    private func reindex(_ id: ObjectIdentifier, users: Set<UUID>, serviceRole: Bool, in state: inout State) {
        let before = state.usersOf[id] ?? []
        for user in before.subtracting(users) {
            state.byUser[user]?.remove(id)
            let count = state.byUser[user]?.count ?? 0
            if count == 0 { state.byUser[user] = nil }
            announce(.sockets(user: user, count: count))
        }
        for user in users.subtracting(before) {
            state.byUser[user, default: []].insert(id)
            announce(.sockets(user: user, count: state.byUser[user]?.count ?? 0))
        }
        state.usersOf[id] = users.isEmpty ? nil : users
        if serviceRole { state.serviceRole.insert(id) } else { state.serviceRole.remove(id) }
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
        guard state.withLock({ $0.byUser[userID] != nil }) else { return }
        sessionChecks.request(userID) { [weak self] in
            guard let self else { return }
            await self.check(
                self.state.withLock { state in
                    (state.byUser[userID] ?? []).compactMap { state.sockets[$0] }
                })
        }
    }

    /// Notifications may have been missed while the listener reconnected.
    private func checkEverySession() {
        let sockets = state.withLock { state in state.byUser.values.flatMap { $0 }.compactMap { state.sockets[$0] } }
        Task { await self.check(sockets) }
    }

    private func check(_ sockets: [RealtimeSocket]) async {
        let sessions = Set(sockets.flatMap(\.sessions))
        guard !sessions.isEmpty else { return }
        do {
            let live = try await authenticator.liveSessions(Array(sessions))
            for socket in sockets {
                // Only sessions asked about: a channel may have swapped to another since.
                socket.revokeChannels(reason: "Session ended", counted: .sessionEnded) {
                    sessions.contains($0.session) && !live.contains($0.session)
                }
            }
        } catch {
            // The database cannot say now; the next notification or token expiry decides.
            logger.warning("realtime: could not check sessions", metadata: ["error": "\(error)"])
        }
    }

    private func revokeExpired() {
        let now = Int(Date().timeIntervalSince1970)
        let sockets = state.withLock { state in
            Set(state.expiries.removeDue(through: now)).compactMap { state.sockets[$0] }
        }
        for socket in sockets {
            socket.revokeChannels(reason: "Token has expired", counted: .tokenExpired) {
                $0.expires <= now
            }
        }
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

    /// A notification that is not a row change: another instance's broadcast or peer message.
    private func received(_ notification: String) {
        guard let value = try? JSONValue(jsonText: notification),
            let origin = value["origin"]?.stringValue
        else { return metrics.dropped(.unreadableNotification) }
        guard origin != instance else { return }
        if let (origin, message) = RealtimePeerMessage.decode(value) {
            return heard(message, from: origin)
        }
        guard let topic = value["topic"]?.stringValue, let broadcast = RealtimeBroadcast(notice: value) else {
            return metrics.dropped(.unreadableNotification)
        }
        for socket in members(of: topic) { socket.send(broadcast, topic: topic) }
    }

    // MARK: presence

    /// The largest presence meta that can go to other instances, as for a broadcast.
    static let presenceLimit = 7_000
    /// The largest topic and presence key together (JSON-escaped), so that a track fits in one notification.
    static let presenceNameLimit = 512

    /// Everyone present in `topic` on every instance: `{key: {metas: [meta, …]}}`.
    func presenceState(_ topic: String) -> String {
        let members = state.withLock { Array(($0.presence[topic] ?? [:]).values) + $0.peers.members(of: topic) }
        return PhoenixMessage.json(PresenceMember.grouped(members))
    }

    func track(_ topic: String, key: String, meta: JSONValue, socket: RealtimeSocket) {
        var stamped: [String: JSONValue] = if case .object(let fields) = meta { fields } else { [:] }
        stamped["phx_ref"] = .string(String(UInt64.random(in: 0...UInt64.max), radix: 36))
        let member = PresenceMember(key: key, meta: .object(stamped))
        var isOpen = false
        let previous = state.withLock { state -> PresenceMember? in
            // A track that raced its socket's close would stay forever.
            guard state.sockets[socket.id] != nil else { return nil }
            isOpen = true
            let previous = state.presence[topic]?[socket.id]
            state.presence[topic, default: [:]][socket.id] = member
            announce(.track(topic: topic, member: member, replaces: previous?.ref))
            return previous
        }
        guard isOpen else { return }
        sendDiff(topic, joins: [member], leaves: previous.map { [$0] } ?? [])
    }

    func untrack(_ topic: String, socket: RealtimeSocket) {
        let previous = state.withLock { state -> PresenceMember? in
            defer { if state.presence[topic]?.isEmpty == true { state.presence[topic] = nil } }
            guard let previous = state.presence[topic]?.removeValue(forKey: socket.id) else { return nil }
            announce(.untrack(topic: topic, ref: previous.ref))
            return previous
        }
        guard let previous else { return }
        sendDiff(topic, joins: [], leaves: [previous])
    }

    private func sendDiff(_ topic: String, joins: [PresenceMember], leaves: [PresenceMember]) {
        let payload = PhoenixMessage.json(
            .object(["joins": PresenceMember.grouped(joins), "leaves": PresenceMember.grouped(leaves)]))
        for socket in members(of: topic) { socket.send(topic: topic, event: "presence_diff", payload: payload) }
    }

    // MARK: the other instances

    /// Queues `message` for the other instances; called holding the state's lock, so that messages leave in the
    /// order of the changes they tell.
    private func announce(_ message: RealtimePeerMessage) {
        announcer.withLock { $0 }?.send(message.encoded(origin: instance))
    }

    private func heard(_ message: RealtimePeerMessage, from origin: String) {
        let diffs = state.withLock { state -> [RealtimePeers.Diff] in
            let (diffs, isNew) = state.peers.receive(message, from: origin, at: .now)
            if case .hello(let to, let nonce) = message, to == nil || to == instance {
                announceEverything(nonce: nonce, in: state)
            }
            // An instance heard of for the first time (new, or back after its lease) is asked what it holds.
            if isNew { announce(.hello(to: origin, nonce: nil)) }
            return diffs
        }
        for diff in diffs { sendDiff(diff.topic, joins: diff.joins, leaves: diff.leaves) }
    }

    /// Every presence and socket count of this instance, then `synced` when a hello with a nonce asked.
    private func announceEverything(nonce: String?, in state: State) {
        for (topic, members) in state.presence {
            for member in members.values { announce(.track(topic: topic, member: member, replaces: nil)) }
        }
        for (user, sockets) in state.byUser { announce(.sockets(user: user, count: sockets.count)) }
        if let nonce { announce(.synced(nonce: nonce)) }
    }

    /// The listener reconnected and may have missed messages: everyone re-announces, and what is not
    /// re-announced is dropped.
    private func askEveryPeer() {
        state.withLock { state in
            let nonce = UUID().uuidString
            state.peers.refresh(nonce: nonce)
            announce(.hello(to: nil, nonce: nonce))
        }
    }

    /// Some of this instance's messages were lost: the others forget it and hear everything again.
    private func announceAgain() {
        state.withLock { state in
            announce(.bye)
            announceEverything(nonce: nil, in: state)
        }
    }

    /// Says `alive` when due and drops the instances not heard from within the lease.
    private func keepPeersInformed() {
        let now = ContinuousClock.now
        let diffs = state.withLock { state -> [RealtimePeers.Diff] in
            if state.lastAlive.map({ now - $0 >= limits.peerHeartbeat }) ?? true {
                state.lastAlive = now
                announce(.alive)
            }
            return state.peers.expire(at: now, lease: limits.peerLease)
        }
        for diff in diffs { sendDiff(diff.topic, joins: diff.joins, leaves: diff.leaves) }
    }
}
