import Foundation
import Logging
import Synchronization

/// A client's IP address as a hashable key (IPv4 in the low bits; IPv6 in both halves).
struct ClientAddressKey: Hashable, Sendable {
    var high: UInt64
    var low: UInt64
}

extension ClientAddressKey {
    /// The key of an address in text form (`127.0.0.1`, `::1`), as the socket's own address gives it; nil when
    /// `text` is no address.
    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(high: 0, low: UInt64(UInt32(bigEndian: v4.s_addr)))
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let (high, low) = withUnsafeBytes(of: v6) { raw in
                (
                    raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                )
            }
            self.init(high: high, low: low)
        } else {
            return nil
        }
    }
}

/// Which part of the body budget a request's body is counted against, by the bytes it has sent so far.
enum BodyShare: Sendable {
    /// A body on a route that takes at most `connectionBodyAllowance` bytes: held within its connection's
    /// allowance, so the connection table bounds them whatever the number of addresses.
    case connection
    /// The small bodies' reserve.
    case small
    /// The rest of the budget, and the account's share when a user's token names one.
    case large(account: String?)
}

/// One accepted connection as the guard tracks it: its socket, its address and the moment by which it must have
/// made progress to the next phase (headers in, body in). Deadlines are absolute, so a client trickling one byte
/// at a time cannot push them back.
final class TrackedConnection: Sendable {
    let socket: Int32
    let address: ClientAddressKey
    /// When the connection was accepted (monotonic nanoseconds): the oldest idle one is evicted first.
    let openedAt = DispatchTime.now().uptimeNanoseconds
    /// `fresh` until its first request's headers are in; only a fresh connection may be evicted.
    let phase = Atomic<Int>(Phase.fresh)
    /// The server answered before the request's body was read: the connection closes with a lingering close.
    let lingers = Atomic<Bool>(false)
    /// Upgraded to a WebSocket: no request deadline applies any more (the WebSocket's own idle timeout does). It
    /// still counts in the table, in all and for its address.
    let upgraded = Atomic<Bool>(false)
    /// Nanoseconds on the monotonic clock (`DispatchTime.uptimeNanoseconds`); 0: no deadline.
    let deadline = Atomic<UInt64>(0)
    /// Body bytes of the current request counted against the budgets: the general share, the small bodies' one.
    let bodyBytes = Atomic<Int>(0)
    let smallBodyBytes = Atomic<Int>(0)
    /// When the current request's body began (monotonic nanoseconds; 0: no body expected) and the bytes of it
    /// received since: the body must keep up with the minimum rate after the grace.
    let bodyStartedAt = Atomic<UInt64>(0)
    let bodyReceived = Atomic<Int>(0)
    /// The account the current request's large body is counted against, if any.
    let account = Mutex<String?>(nil)

    enum Phase {
        static let fresh = 0
        static let requested = 1
        static let evicted = 2
    }

    init(socket: Int32, address: ClientAddressKey) {
        self.socket = socket
        self.address = address
    }

    func setDeadline(after duration: Duration?) {
        guard let duration else {
            deadline.store(0, ordering: .relaxed)
            return
        }
        let (seconds, attoseconds) = duration.components
        let nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        deadline.store(DispatchTime.now().uptimeNanoseconds + nanoseconds, ordering: .relaxed)
    }
}

/// What one client may hold: connections per address and in all, deadlines for a request's headers and body,
/// and the bytes of request bodies buffered in memory (in all and per address).
///
/// A reaper thread shuts down the socket of a connection past its deadline; libmicrohttpd then sees the
/// connection fail and closes it itself. The socket is still the connection's while it is tracked: MHD tells
/// `closed` before it closes the descriptor, and `closed` waits for the reaper's lock.
final class ConnectionGuard: Sendable {
    /// What is held of one resource, in all and per address.
    private struct Held {
        var total = 0
        var byAddress: [ClientAddressKey: Int] = [:]

        mutating func add(_ count: Int, for address: ClientAddressKey) {
            total += count
            byAddress[address, default: 0] += count
        }

        /// Gives `count` back; an address holding nothing more is forgotten.
        mutating func remove(_ count: Int, for address: ClientAddressKey) {
            total -= count
            let left = byAddress[address, default: 0] - count
            byAddress[address] = left > 0 ? left : nil
        }
    }

    private struct State {
        var connections = Held()
        var tracked: [ObjectIdentifier: TrackedConnection] = [:]
        var bodyBytes = Held()
        var smallBodyBytes = Held()
        var bodyBytesByAccount: [String: Int] = [:]
        /// Each address's allowance of new connections (a token bucket) and when it was last topped up.
        var allowances: [ClientAddressKey: (tokens: Double, at: UInt64)] = [:]
    }

    /// The server's limits, with the small bodies' reserve at most half the budget.
    let limits: HTTPServerConfiguration
    private let state = Mutex(State())
    private let warnings: RateLimitedWarning
    private let stopping = Atomic<Bool>(false)

    /// Trusted proxies: every client behind one shares its address, so the per-address connection limits skip it.
    private let proxies: Set<ClientAddressKey>

    init(limits: HTTPServerConfiguration, logger: Logger) {
        var limits = limits
        limits.smallBodyReserve = min(limits.smallBodyReserve, limits.bodyBudget / 2)
        self.limits = limits
        self.proxies = Set(limits.trustedProxies.addresses.compactMap(ClientAddressKey.init))
        self.warnings = RateLimitedWarning(logger: logger, interval: .seconds(10))
    }

    // MARK: connections

    /// Reserves a connection slot for `address`; false (and a warning, at most one per interval) when a limit
    /// turns it away. When the table is full, the new connection takes the slot of an idle one that never sent a
    /// request (`evictIdle`) instead.
    func admit(_ address: ClientAddressKey, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        var evicted = false
        let refusal: String? = state.withLock { state in
            let proxy = proxies.contains(address)
            if !proxy, state.connections.byAddress[address, default: 0] >= limits.connectionsPerAddress {
                return "per-address connection limit reached"
            }
            if state.connections.total >= limits.connectionLimit {
                guard Self.evictIdle(&state) else { return "connection limit reached" }
                evicted = true
            }
            if !proxy, limits.newConnectionsPerAddressPerSecond > 0 {
                // Refused at accept, before a byte is read: a flood of short connections costs little.
                let burst = Double(2 * limits.newConnectionsPerAddressPerSecond)
                let last = state.allowances[address] ?? (burst, now)
                let tokens = min(
                    burst, last.tokens + Double(now &- last.at) / 1e9 * Double(limits.newConnectionsPerAddressPerSecond)
                )
                guard tokens >= 1 else {
                    state.allowances[address] = (tokens, now)
                    return "per-address new-connection rate reached"
                }
                state.allowances[address] = (tokens - 1, now)
            }
            state.connections.add(1, for: address)
            return nil
        }
        if let refusal { warnings.note(refusal) }
        if evicted { warnings.note("connection table full: idle connections evicted") }
        return refusal == nil
    }

    /// Shuts down the oldest connection that has not sent a request yet, from the address holding the most
    /// connections, and gives its slot away at once; false when every connection has sent one. (A connection
    /// in the middle of a request is never evicted.)
    private static func evictIdle(_ state: inout State) -> Bool {
        var victim: TrackedConnection?
        var victimHeld = 0
        for connection in state.tracked.values
        where connection.phase.load(ordering: .relaxed) == TrackedConnection.Phase.fresh {
            let held = state.connections.byAddress[connection.address, default: 0]
            if victim == nil || held > victimHeld || held == victimHeld && connection.openedAt < victim!.openedAt {
                victim = connection
                victimHeld = held
            }
        }
        guard let victim,
            victim.phase.compareExchange(
                expected: TrackedConnection.Phase.fresh, desired: TrackedConnection.Phase.evicted, ordering: .relaxed
            ).exchanged
        else { return false }
        // Under the lock: the socket cannot have been closed (and reused) yet, see the type's comment.
        shutdown(victim.socket, Int32(SHUT_RDWR))
        state.tracked[ObjectIdentifier(victim)] = nil
        state.connections.remove(1, for: victim.address)
        return true
    }

    /// A connection admitted by `admit` started; it must send its first request's headers in time, sooner while
    /// the table is more than three quarters full (`crowdedHeaderTimeout`).
    func opened(_ connection: TrackedConnection) {
        state.withLock { state in
            let crowded = state.connections.total * 4 > limits.connectionLimit * 3
            connection.setDeadline(
                after: crowded ? min(limits.headerTimeout, limits.crowdedHeaderTimeout) : limits.headerTimeout)
            state.tracked[ObjectIdentifier(connection)] = connection
        }
    }

    /// The connection is gone (MHD has not closed its socket yet). Releases its slot (unless an eviction gave it
    /// away already) and any body bytes it held.
    func closed(_ connection: TrackedConnection) {
        state.withLock { state in
            if state.tracked.removeValue(forKey: ObjectIdentifier(connection)) != nil,
                !connection.upgraded.load(ordering: .relaxed)
            {
                state.connections.remove(1, for: connection.address)
            }
        }
        releaseBody(of: connection)
    }

    /// A connection upgraded to a WebSocket (taken from MHD at the upgrade) is closed: gives its slot back.
    func releaseUpgraded(_ connection: TrackedConnection) {
        state.withLock { $0.connections.remove(1, for: connection.address) }
    }

    /// Shuts down `connection`'s socket if it is still open (MHD then closes it): a stream's consumer fell behind.
    func cut(_ connection: TrackedConnection) {
        state.withLock { state in
            // Under the lock: the socket cannot have been closed (and reused) yet, see the type's comment.
            guard state.tracked[ObjectIdentifier(connection)] != nil else { return }
            shutdown(connection.socket, Int32(SHUT_RDWR))
        }
    }

    /// A connection MHD refused after `admit` (so `opened` never came): gives the slot back.
    func abandon(_ address: ClientAddressKey) {
        state.withLock { $0.connections.remove(1, for: address) }
    }

    // MARK: request phases

    /// Headers are in: the body (if any) must be complete within the body timeout of now. False when the
    /// connection was evicted meanwhile.
    func headersReceived(_ connection: TrackedConnection, expectsBody: Bool) -> Bool {
        let phase = connection.phase.compareExchange(
            expected: TrackedConnection.Phase.fresh, desired: TrackedConnection.Phase.requested, ordering: .relaxed)
        guard phase.original != TrackedConnection.Phase.evicted else { return false }
        connection.setDeadline(after: expectsBody ? limits.bodyTimeout : nil)
        connection.bodyReceived.store(0, ordering: .relaxed)
        connection.bodyStartedAt.store(expectsBody ? DispatchTime.now().uptimeNanoseconds : 0, ordering: .relaxed)
        return true
    }

    /// `count` bytes of the current request's body arrived.
    func bodyArrived(_ count: Int, on connection: TrackedConnection) {
        connection.bodyReceived.add(count, ordering: .relaxed)
    }

    /// The request is being handled: no deadline (MHD's idle timeout still applies to a client that stops reading).
    func handling(_ connection: TrackedConnection) {
        connection.setDeadline(after: nil)
        connection.bodyStartedAt.store(0, ordering: .relaxed)
    }

    /// A response went out: the next request's headers must arrive within the header timeout, and the request's
    /// body bytes are released.
    func requestFinished(_ connection: TrackedConnection) {
        connection.setDeadline(after: connection.upgraded.load(ordering: .relaxed) ? nil : limits.headerTimeout)
        connection.bodyStartedAt.store(0, ordering: .relaxed)
        releaseBody(of: connection)
    }

    /// Gives back every body byte `connection` holds, in each share.
    private func releaseBody(of connection: TrackedConnection) {
        let bytes = connection.bodyBytes.exchange(0, ordering: .relaxed)
        let small = connection.smallBodyBytes.exchange(0, ordering: .relaxed)
        let account = connection.account.withLock { account in
            defer { account = nil }
            return account
        }
        guard bytes > 0 || small > 0 else { return }
        state.withLock { state in
            if bytes > 0 { state.bodyBytes.remove(bytes, for: connection.address) }
            if small > 0 { state.smallBodyBytes.remove(small, for: connection.address) }
            if let account, bytes > 0 {
                let left = state.bodyBytesByAccount[account, default: 0] - bytes
                state.bodyBytesByAccount[account] = left > 0 ? left : nil
            }
        }
    }

    // MARK: body budget

    /// Counts `bytes` of a request body against its share as they arrive (what a client holds is what it has
    /// sent); false (nothing counted) when the share would be exceeded. With `charge` false, only asks whether
    /// they would fit now (a body's declared length, from its headers).
    func reserveBody(_ bytes: Int, for connection: TrackedConnection, in share: BodyShare, charge: Bool = true) -> Bool
    {
        guard bytes > 0 else { return true }
        switch share {
        case .connection: return true
        case .small: return reserveSmallBody(bytes, for: connection, charge: charge)
        case .large(let account): return reserveLargeBody(bytes, for: connection, account: account, charge: charge)
        }
    }

    private func reserveLargeBody(_ bytes: Int, for connection: TrackedConnection, account: String?, charge: Bool)
        -> Bool
    {
        if charge, let account { connection.account.withLock { $0 = account } }
        let reserved = state.withLock { state -> Bool in
            let byAddress = state.bodyBytes.byAddress[connection.address, default: 0]
            let byAccount = account.map { state.bodyBytesByAccount[$0, default: 0] } ?? 0
            guard state.bodyBytes.total + bytes <= limits.bodyBudget - limits.smallBodyReserve,
                byAddress + bytes <= limits.bodyBudgetPerAddress, byAccount + bytes <= limits.bodyBudgetPerAccount
            else { return false }
            guard charge else { return true }
            state.bodyBytes.add(bytes, for: connection.address)
            if let account { state.bodyBytesByAccount[account] = byAccount + bytes }
            return true
        }
        if !reserved {
            warnings.note("request body budget exhausted")
        } else if charge {
            connection.bodyBytes.add(bytes, ordering: .relaxed)
        }
        return reserved
    }

    private func reserveSmallBody(_ bytes: Int, for connection: TrackedConnection, charge: Bool) -> Bool {
        let reserved = state.withLock { state -> Bool in
            let byAddress = state.smallBodyBytes.byAddress[connection.address, default: 0]
            guard state.smallBodyBytes.total + bytes <= limits.smallBodyReserve,
                byAddress + bytes <= max(limits.smallBodyLimit, limits.smallBodyReserve / 8)
            else { return false }
            if charge { state.smallBodyBytes.add(bytes, for: connection.address) }
            return true
        }
        if !reserved {
            warnings.note("small request body reserve exhausted")
        } else if charge {
            connection.smallBodyBytes.add(bytes, ordering: .relaxed)
        }
        return reserved
    }

    var bufferedBodyBytes: Int { state.withLock { $0.bodyBytes.total + $0.smallBodyBytes.total } }

    // MARK: the reaper

    /// Shuts down every connection past its deadline; returns how many. Also forgets the allowances of addresses
    /// that have been quiet long enough to be full again (so the table holds only recent addresses).
    @discardableResult
    func enforceDeadlines(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Int {
        let expired = state.withLock { state -> Int in
            if limits.newConnectionsPerAddressPerSecond > 0, state.allowances.count > 1024 {
                state.allowances = state.allowances.filter { now &- $0.value.at < 2_000_000_000 }
            }
            var expired = 0
            for connection in state.tracked.values {
                let deadline = connection.deadline.load(ordering: .relaxed)
                guard deadline != 0, deadline <= now || isBelowMinimumRate(connection, now: now) else { continue }
                connection.deadline.store(0, ordering: .relaxed)
                connection.bodyStartedAt.store(0, ordering: .relaxed)
                // Under the lock: the socket cannot have been closed (and reused) yet, see the type's comment.
                shutdown(connection.socket, Int32(SHUT_RDWR))
                expired += 1
            }
            return expired
        }
        if expired > 0 { warnings.note("slow clients disconnected (request deadline passed)", count: expired) }
        return expired
    }

    /// A body still arriving after the grace, with fewer bytes than the minimum rate would have brought: each
    /// `bodyMinRate` bytes buy one more second (as mod_reqtimeout's `MinRate` extends its timeout).
    private func isBelowMinimumRate(_ connection: TrackedConnection, now: UInt64) -> Bool {
        let started = connection.bodyStartedAt.load(ordering: .relaxed)
        guard limits.bodyMinRate > 0, started != 0, now > started else { return false }
        let grace = limits.bodyGrace / .seconds(1)
        let allowed = grace + Double(connection.bodyReceived.load(ordering: .relaxed)) / Double(limits.bodyMinRate)
        return Double(now - started) / 1e9 > allowed
    }

    /// Runs `enforceDeadlines` every quarter second on a thread of its own until `stop()`.
    func startReaper() {
        let thread = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                enforceDeadlines()
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
        thread.name = "http-deadlines"
        thread.start()
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
    }
}

/// A warning written at most once per interval per message, with how many times it happened in between: a flood
/// must not become a flood of log lines.
final class RateLimitedWarning: Sendable {
    private let logger: Logger
    private let interval: Duration
    private let pending = Mutex<[String: (count: Int, lastLogged: ContinuousClock.Instant?)]>([:])

    init(logger: Logger, interval: Duration) {
        self.logger = logger
        self.interval = interval
    }

    func note(_ message: String, count: Int = 1) {
        let now = ContinuousClock.now
        let due: Int? = pending.withLock { pending in
            var entry = pending[message] ?? (0, nil)
            entry.count += count
            if let last = entry.lastLogged, now - last < interval {
                pending[message] = entry
                return nil
            }
            pending[message] = (0, now)
            return entry.count
        }
        if let due {
            logger.warning(
                "\(message)",
                metadata: [
                    "count": .stringConvertible(due),
                    "interval_seconds": .stringConvertible(interval.components.seconds),
                ])
        }
    }
}
