import Foundation
import QuoteVault
import Synchronization

/// At most `perAddress` requests of one kind running or waiting at once for one client address, and at most `global`
/// running for everyone: expensive work holds a database connection for its whole run, so neither one address nor a
/// few together may take the pool (the statement timeout bounds each run; this bounds how many). Past the address's
/// cap `429` at once; past the global one a request may wait a moment for a place (`enter(_:use:waitingUpTo:)`),
/// holding no database connection and no thread, then `503`; both with `Retry-After`.
///
/// A place given back goes to the fairest waiter, not the first to look: one whose address has the fewest requests
/// running, then the one whose address held places the least recently (decaying over `placeTimeWindow`), then the
/// one whose client used the least database time, then the earliest. So a second search of an address that has one
/// running never goes before the first of an address with none, and an address that searches now and then goes
/// before a crowd of addresses that search all the time.
final class ConcurrencyGate: Sendable {
    private let perAddress: Int
    private let global: Int

    fileprivate struct Waiter {
        let id: UInt64
        let address: String
        /// The client's recent database time when it asked (`DatabaseTimeLedger`).
        let use: Double
        let admit: CheckedContinuation<QuoteVaultError?, Never>
    }

    fileprivate struct State {
        var total = 0
        var running: [String: Int] = [:]
        /// When each address's running requests took their places, earliest first.
        var startedAt: [String: [Double]] = [:]
        /// Seconds each address held places, decayed to `placeTimeUpdated`.
        var placeTime: [String: (seconds: Double, updated: Double)] = [:]
        var waiting: [String: Int] = [:]
        var waiters: [Waiter] = []
        var lastID: UInt64 = 0
    }

    private let state = Mutex(State())
    private static let origin = ContinuousClock.now
    /// The time constant of an address's place time: about the last ten seconds count.
    static let placeTimeWindow = 10.0

    fileprivate static func now() -> Double { (ContinuousClock.now - origin) / .seconds(1) }

    init(perAddress: Int, global: Int = .max) {
        self.perAddress = perAddress
        self.global = global
    }

    /// Takes a place for `address`; nil when admitted (give it back with `leave`), else the refusal.
    func enter(_ address: String) -> QuoteVaultError? {
        state.withLock { state -> QuoteVaultError? in
            switch Self.immediateVerdict(&state, address, perAddress: perAddress, global: global) {
            case .admitted: nil
            case .overAddressCap: .rateLimited(retryAfterSeconds: 1)
            case nil: .busy(retryAfterSeconds: 1)
            }
        }
    }

    /// `enter`, but past the global cap it waits until `wait` has passed for a place given back, in the order above:
    /// expensive requests are short, so clients who ask at the same instant are served in turn instead of refused.
    /// The per-address cap (running and waiting together) still refuses at once, so one address cannot queue more
    /// than its own share.
    func enter(_ address: String, use: Double = 0, waitingUpTo wait: Duration) async -> QuoteVaultError? {
        await withCheckedContinuation { (admit: CheckedContinuation<QuoteVaultError?, Never>) in
            let queued = state.withLock { state -> UInt64? in
                if let verdict = Self.immediateVerdict(&state, address, perAddress: perAddress, global: global) {
                    admit.resume(returning: verdict == .admitted ? nil : .rateLimited(retryAfterSeconds: 1))
                    return nil
                }
                state.lastID += 1
                state.waiters.append(Waiter(id: state.lastID, address: address, use: use, admit: admit))
                state.waiting[address, default: 0] += 1
                return state.lastID
            }
            guard let queued else { return }
            Task { [self] in
                try? await Task.sleep(for: wait)
                giveUp(queued)
            }
        }
    }

    private enum Verdict { case admitted, overAddressCap }

    /// Admitted or refused at once, or nil: the request waits.
    private static func immediateVerdict(
        _ state: inout State, _ address: String, perAddress: Int, global: Int
    ) -> Verdict? {
        guard state.pending(address) < perAddress else { return .overAddressCap }
        guard state.total < global, state.waiters.isEmpty else { return nil }
        state.admit(address)
        return .admitted
    }

    /// The waiter `id` has waited its whole bound: refused, unless a place reached it first.
    private func giveUp(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = state.waiters.remove(at: index)
            state.stopWaiting(waiter.address)
            return waiter
        }
        waiter?.admit.resume(returning: .busy(retryAfterSeconds: 1))
    }

    func leave(_ address: String) {
        let next = state.withLock { state -> Waiter? in
            let left = state.running[address, default: 1] - 1
            state.running[address] = left > 0 ? left : nil
            state.total -= 1
            state.chargePlaceTime(address)
            guard state.total < global, let index = state.fairestWaiter() else { return nil }
            let waiter = state.waiters.remove(at: index)
            state.stopWaiting(waiter.address)
            state.admit(waiter.address)
            return waiter
        }
        next?.admit.resume(returning: nil)
    }

    func run<T: Sendable>(for address: String, _ body: () async throws -> T) async throws -> T {
        if let refusal = enter(address) { throw refusal }
        defer { leave(address) }
        return try await body()
    }
}

extension ConcurrencyGate.State {
    /// Requests of `address` running or waiting.
    func pending(_ address: String) -> Int { running[address, default: 0] + waiting[address, default: 0] }

    mutating func admit(_ address: String) {
        running[address, default: 0] += 1
        total += 1
        startedAt[address, default: []].append(ConcurrencyGate.now())
    }

    /// Charges the place `address` gives back. Which of its places ended is not known, so the earliest start is
    /// taken: the sum charged over its places is the same either way.
    mutating func chargePlaceTime(_ address: String) {
        guard var starts = startedAt[address], !starts.isEmpty else { return }
        let now = ConcurrencyGate.now()
        let held = now - starts.removeFirst()
        startedAt[address] = starts.isEmpty ? nil : starts
        placeTime[address] = (recentPlaceTime(address, at: now) + held, now)
        if placeTime.count > 4096 {
            placeTime = placeTime.filter { address, _ in recentPlaceTime(address, at: now) > 0.001 }
        }
    }

    /// Seconds `address` held places recently (decayed).
    func recentPlaceTime(_ address: String, at now: Double) -> Double {
        guard let entry = placeTime[address] else { return 0 }
        return entry.seconds * exp(-(now - entry.updated) / ConcurrencyGate.placeTimeWindow)
    }

    mutating func stopWaiting(_ address: String) {
        let left = waiting[address, default: 1] - 1
        waiting[address] = left > 0 ? left : nil
    }

    /// Fewest running of its address, then least recent place time of its address, then least recent database time
    /// of its client, then earliest.
    func fairestWaiter() -> Int? {
        let now = ConcurrencyGate.now()
        return waiters.indices.min { left, right in
            let a = waiters[left]
            let b = waiters[right]
            let runningA = running[a.address, default: 0]
            let runningB = running[b.address, default: 0]
            if runningA != runningB { return runningA < runningB }
            let heldA = recentPlaceTime(a.address, at: now)
            let heldB = recentPlaceTime(b.address, at: now)
            if heldA != heldB { return heldA < heldB }
            if a.use != b.use { return a.use < b.use }
            return a.id < b.id
        }
    }
}
