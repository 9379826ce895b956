import Foundation
import Logging
import Synchronization

/// A client's IP address as a hashable key (IPv4 in the low bits; IPv6 in both halves).
struct ClientAddressKey: Hashable, Sendable {
    var high: UInt64
    var low: UInt64
}

/// One accepted connection as the guard tracks it: its socket, its address and the moment by which it must have
/// made progress to the next phase (headers in, body in). Deadlines are absolute, so a client trickling one byte
/// at a time cannot push them back.
final class TrackedConnection: Sendable {
    let socket: Int32
    let address: ClientAddressKey
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

    init(limits: HTTPServerConfiguration, logger: Logger) {
        var limits = limits
        limits.smallBodyReserve = min(limits.smallBodyReserve, limits.bodyBudget / 2)
        self.limits = limits
        self.warnings = RateLimitedWarning(logger: logger, interval: .seconds(10))
    }

    // MARK: connections

    /// Reserves a connection slot for `address`; false (and a warning, at most one per interval) when a limit
    /// turns it away.
    func admit(_ address: ClientAddressKey, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        let refusal: String? = state.withLock { state in
            if state.connections.total >= limits.connectionLimit { return "connection limit reached" }
            if state.connections.byAddress[address, default: 0] >= limits.connectionsPerAddress {
                return "per-address connection limit reached"
            }
            if limits.newConnectionsPerAddressPerSecond > 0 {
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
        return refusal == nil
    }

    /// A connection admitted by `admit` started; it must send its first request's headers in time.
    func opened(_ connection: TrackedConnection) {
        connection.setDeadline(after: limits.headerTimeout)
        state.withLock { $0.tracked[ObjectIdentifier(connection)] = connection }
    }

    /// The connection is gone (MHD has not closed its socket yet). Releases its slot and any body bytes it held.
    func closed(_ connection: TrackedConnection) {
        state.withLock { state in
            state.tracked[ObjectIdentifier(connection)] = nil
            state.connections.remove(1, for: connection.address)
        }
        releaseBody(of: connection)
    }

    /// A connection MHD refused after `admit` (so `opened` never came): gives the slot back.
    func abandon(_ address: ClientAddressKey) {
        state.withLock { $0.connections.remove(1, for: address) }
    }

    // MARK: request phases

    /// Headers are in: the body (if any) must be complete within the body timeout of now.
    func headersReceived(_ connection: TrackedConnection, expectsBody: Bool) {
        connection.setDeadline(after: expectsBody ? limits.bodyTimeout : nil)
        connection.bodyReceived.store(0, ordering: .relaxed)
        connection.bodyStartedAt.store(expectsBody ? DispatchTime.now().uptimeNanoseconds : 0, ordering: .relaxed)
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
        connection.setDeadline(after: limits.headerTimeout)
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

    /// Counts `bytes` of a request body against its budgets; false (nothing counted) when one would be exceeded.
    /// - Parameters:
    ///   - small: a body declared at most `smallBodyLimit` long: counted against the small bodies' reserve only.
    ///   - account: who sends a large body (from a user's token), counted against the account's share; later
    ///     chunks of the same body keep the first one's.
    func reserveBody(
        _ bytes: Int, for connection: TrackedConnection, small: Bool = false, account: String? = nil
    ) -> Bool {
        guard bytes > 0 else { return true }
        if small { return reserveSmallBody(bytes, for: connection) }
        let account = connection.account.withLock { current in
            if current == nil { current = account }
            return current
        }
        let reserved = state.withLock { state -> Bool in
            let byAddress = state.bodyBytes.byAddress[connection.address, default: 0]
            let byAccount = account.map { state.bodyBytesByAccount[$0, default: 0] } ?? 0
            guard state.bodyBytes.total + bytes <= limits.bodyBudget - limits.smallBodyReserve,
                byAddress + bytes <= limits.bodyBudgetPerAddress, byAccount + bytes <= limits.bodyBudgetPerAccount
            else { return false }
            state.bodyBytes.add(bytes, for: connection.address)
            if let account { state.bodyBytesByAccount[account] = byAccount + bytes }
            return true
        }
        if reserved {
            connection.bodyBytes.add(bytes, ordering: .relaxed)
        } else {
            warnings.note("request body budget exhausted")
        }
        return reserved
    }

    private func reserveSmallBody(_ bytes: Int, for connection: TrackedConnection) -> Bool {
        let reserved = state.withLock { state -> Bool in
            let byAddress = state.smallBodyBytes.byAddress[connection.address, default: 0]
            guard state.smallBodyBytes.total + bytes <= limits.smallBodyReserve,
                byAddress + bytes <= max(limits.smallBodyLimit, limits.smallBodyReserve / 8)
            else { return false }
            state.smallBodyBytes.add(bytes, for: connection.address)
            return true
        }
        if reserved {
            connection.smallBodyBytes.add(bytes, ordering: .relaxed)
        } else {
            warnings.note("small request body reserve exhausted")
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
