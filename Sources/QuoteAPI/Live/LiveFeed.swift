import Failures
import Foundation
import HTTPServer
import Logging
import PGClient
import QuoteVault
import Synchronization

/// The open streams of `GET /v1/sync/events` on this instance, by user, and what is sent on them.
///
/// A notification on `library_changes` (migrations/0080) names a user whose feed changed or one of whose sessions
/// ended, on any instance; this instance then looks once (one lookup of the feed's position, one of the streams'
/// sessions) and sends `changed` with the new position on each stream whose session is live, and ends the others.
/// Notifications for one user that arrive while it looks are answered by one more look, not one each.
public final class LiveFeed: Sendable {
    private struct Subscriber: Sendable {
        let stream: EventStream
        let sessionID: UUID
        let address: String
    }

    private struct State {
        var byUser: [UUID: [ObjectIdentifier: Subscriber]] = [:]
        var byAddress: [String: Int] = [:]
    }

    public let limits: LiveFeedLimits
    private let sync: SyncContext
    private let authenticator: Authenticator
    private let logger: Logger
    private let state = Mutex(State())
    /// One look per user at a time, and one more for the notifications that arrive meanwhile.
    private let looks = CoalescingRunner<UUID>()
    private let warnings: Mutex<ContinuousClock.Instant?> = Mutex(nil)
    private let keepAlive = Mutex<Task<Void, Never>?>(nil)
    private let listener = Mutex<PGListener?>(nil)

    public static let channel = "library_changes"

    public init(limits: LiveFeedLimits, sync: SyncContext, authenticator: Authenticator, logger: Logger) {
        self.limits = limits
        self.sync = sync
        self.authenticator = authenticator
        self.logger = logger
    }

    /// Listens for notifications on a dedicated connection to `databaseURL` and starts the keep-alive loop.
    public func start(databaseURL: String) {
        let listener = PGListener(
            connectionString: databaseURL, channel: Self.channel, logger: logger,
            onNotification: { [weak self] payload in
                guard let self, let userID = UUID(uuidString: payload) else { return }
                self.changed(userID)
            },
            onReconnect: { [weak self] in self?.lookAgainAtEveryone() })
        listener.start()
        self.listener.withLock { $0 = listener }
        let interval = limits.keepAlive
        keepAlive.withLock {
            $0 = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    await self?.sendKeepAlives()
                }
            }
        }
    }

    public func stop() {
        listener.withLock { $0?.stop() }
        keepAlive.withLock { $0?.cancel() }
    }

    /// The listening connection (for tests and operators).
    public var notificationListener: PGListener? { listener.withLock { $0 } }

    /// Streams open now.
    public var openStreams: Int { state.withLock { $0.byUser.values.reduce(0) { $0 + $1.count } } }

    // MARK: opening

    /// Opens a stream for `user`'s session from `address`, whose first event is the feed's current position.
    /// - Throws: `Failure.rateLimited` past the per-user or per-address limit.
    public func open(for user: AuthenticatedUser, from address: String) async throws -> EventStream {
        let stream = EventStream(bufferLimit: limits.bufferLimit)
        let key = ObjectIdentifier(stream)
        let subscriber = Subscriber(stream: stream, sessionID: user.sessionID, address: address)
        let admitted = state.withLock { state -> Bool in
            guard state.byUser[user.userID, default: [:]].count < limits.perUser,
                state.byAddress[address, default: 0] < limits.perAddress
            else { return false }
            state.byUser[user.userID, default: [:]][key] = subscriber
            state.byAddress[address, default: 0] += 1
            return true
        }
        guard admitted else { throw Failure.rateLimited(retryAfterSeconds: limits.retryAfterSeconds) }
        stream.onClose { [weak self] in self?.remove(key, of: user.userID, from: address) }
        do {
            stream.send(try await changedEvent(for: user.userID))
        } catch {
            remove(key, of: user.userID, from: address)
            throw error
        }
        return stream
    }

    private func remove(_ key: ObjectIdentifier, of userID: UUID, from address: String) {
        state.withLock { state in
            guard state.byUser[userID]?.removeValue(forKey: key) != nil else { return }
            if state.byUser[userID]?.isEmpty == true { state.byUser[userID] = nil }
            let left = state.byAddress[address, default: 1] - 1
            state.byAddress[address] = left > 0 ? left : nil
        }
    }

    /// `event: changed` with the user's current position, a token `GET /v1/sync?since=` continues from.
    private func changedEvent(for userID: UUID) async throws -> [UInt8] {
        let position = try await sync.feed.position(userID: userID)
        var writer = JSONWriter(capacity: 96)
        writer.raw("{")
        writer.key("next"); writer.string(sync.tokens.encode(position, userID: userID))
        writer.raw("}")
        return ServerSentEvent.event("changed", data: String(decoding: writer.bytes, as: UTF8.self))
    }

    // MARK: notifications

    /// `userID`'s feed changed or one of its sessions ended (a notification, on any instance).
    public func changed(_ userID: UUID) {
        guard state.withLock({ $0.byUser[userID] != nil }) else { return }
        looks.request(userID) { [weak self] in await self?.look(at: userID) }
    }

    /// Notifications may have been missed (the listener reconnected): every stream gets the current position.
    private func lookAgainAtEveryone() {
        for userID in state.withLock({ Array($0.byUser.keys) }) { changed(userID) }
    }

    private func subscribers(of userID: UUID) -> [Subscriber] {
        state.withLock { Array(($0.byUser[userID] ?? [:]).values) }
    }

    /// Sends the user's position to its streams of live sessions and ends the others. When the database cannot
    /// say, the streams end: a client reconnects and learns the position then, so nothing is missed.
    private func look(at userID: UUID) async {
        let subscribers = subscribers(of: userID)
        guard !subscribers.isEmpty else { return }
        do {
            let live = try await authenticator.liveSessions(subscribers.map(\.sessionID))
            let event = try await changedEvent(for: userID)
            for subscriber in subscribers {
                if live.contains(subscriber.sessionID) {
                    subscriber.stream.send(event)
                } else {
                    subscriber.stream.finish()
                }
            }
        } catch {
            warn("live changes: could not look at a user's feed; its streams end", error)
            for subscriber in subscribers { subscriber.stream.finish() }
        }
    }

    // MARK: keep-alive

    /// A comment on every stream, after ending those whose session ended (one lookup for all of them).
    private func sendKeepAlives() async {
        let all = state.withLock { $0.byUser.values.flatMap(\.values) }
        guard !all.isEmpty else { return }
        var live: Set<UUID>?
        do {
            live = try await authenticator.liveSessions(Array(Set(all.map(\.sessionID))))
        } catch {
            // A database outage is no reason to drop every client: they are kept until it can answer.
            warn("live changes: could not check the streams' sessions", error)
        }
        let comment = ServerSentEvent.comment("keep-alive")
        for subscriber in all {
            if let live, !live.contains(subscriber.sessionID) {
                subscriber.stream.finish()
            } else {
                subscriber.stream.send(comment)
            }
        }
    }

    /// A warning at most once a minute.
    private func warn(_ message: String, _ error: any Error) {
        let now = ContinuousClock.now
        let due = warnings.withLock { last -> Bool in
            if let previous = last, now - previous < .seconds(60) { return false }
            last = now
            return true
        }
        if due { logger.warning("\(message)", metadata: ["error": .string(String(describing: error))]) }
    }
}
