import Foundation
import Synchronization

/// The database time each client used recently, measured where it is spent: a pool charges every job's time on its
/// connection to the client the job ran for (`PGPool.chargedClient`). A client's use decays exponentially (time
/// constant `window`), so it reads as "connection-seconds in about the last `window`"; a job still running counts
/// what it has used so far, so a client with a slow statement in flight is seen as heavy before it ends.
///
/// Pools read it to serve the lightest client first and the application to treat a heavy client as expensive
/// (see `FairShare` in QuoteApp). It also remembers when connections were last short: sharing matters only then.
public final class DatabaseTimeLedger: Sendable {
    public let window: Duration

    private struct Use {
        /// Seconds charged, decayed to `updated`.
        var decayed: Double = 0
        var updated: Double = 0
        /// Jobs running now and the sum of their start times, so their time so far is `running × now − startSum`.
        var running = 0
        var startSum: Double = 0

        func total(at now: Double, window: Double) -> Double {
            decayed * Self.decay(now - updated, window) + (Double(running) * now - startSum)
        }

        mutating func settle(at now: Double, window: Double) {
            decayed *= Self.decay(now - updated, window)
            updated = now
        }

        static func decay(_ elapsed: Double, _ window: Double) -> Double {
            elapsed <= 0 ? 1 : exp(-elapsed / window)
        }
    }

    private struct State {
        var clients: [String: Use] = [:]
        var lastShortage: Double = -.infinity
        var changesSinceSweep = 0
    }

    private let state = Mutex(State())
    private let origin = ContinuousClock.now
    private let windowSeconds: Double

    /// Entries whose decayed use fell below this, with nothing running, are forgotten by the sweep.
    private static let forgettable = 0.001
    /// A sweep runs after this many changes once the table holds more entries than it.
    private static let sweepEvery = 1024

    public init(window: Duration = .seconds(10)) {
        self.window = window
        windowSeconds = window / .seconds(1)
    }

    /// Seconds since the ledger began: the clock every entry is kept in.
    public func now() -> Double { (ContinuousClock.now - origin) / .seconds(1) }

    /// A job of `client` took a connection at `start` (from `now()`).
    func started(_ client: String, at start: Double) {
        state.withLock { state in
            state.clients[client, default: Use(updated: start)].running += 1
            state.clients[client]?.startSum += start
        }
    }

    /// A job of `client` that started at `start` is done; `seconds` of connection time are charged to it.
    func finished(_ client: String, startedAt start: Double, charging seconds: Double, at end: Double) {
        let window = windowSeconds
        state.withLock { state in
            var use = state.clients[client, default: Use(updated: end)]
            use.settle(at: end, window: window)
            use.decayed += max(0, seconds)
            if use.running > 0 {
                use.running -= 1
                use.startSum -= start
            }
            if use.running == 0 { use.startSum = 0 }
            state.clients[client] = use
            state.changesSinceSweep += 1
            if state.changesSinceSweep >= Self.sweepEvery, state.clients.count > Self.sweepEvery {
                Self.sweep(&state, at: end, window: window)
            }
        }
    }

    /// Connections were short at `time` (from `now()`; default: now): a job had to wait for one.
    public func noteShortage(at time: Double? = nil) {
        let time = time ?? now()
        state.withLock { $0.lastShortage = max($0.lastShortage, time) }
    }

    /// Whether connections were short within the last `window`.
    public func wasShortRecently() -> Bool {
        let now = now()
        return state.withLock { now - $0.lastShortage <= windowSeconds }
    }

    /// `client`'s recent database time in seconds (decayed), running jobs included.
    public func recentUse(of client: String) -> Double {
        let now = now()
        let window = windowSeconds
        return state.withLock { $0.clients[client]?.total(at: now, window: window) ?? 0 }
    }

    /// The recent use of each of `clients`, read under one lock (the pool orders its queue by it).
    func recentUse(of clients: some Sequence<String>, at now: Double) -> [String: Double] {
        let window = windowSeconds
        return state.withLock { state in
            var uses: [String: Double] = [:]
            for client in clients where uses[client] == nil {
                uses[client] = state.clients[client]?.total(at: now, window: window) ?? 0
            }
            return uses
        }
    }

    /// Clients the ledger holds an entry for (for tests and metrics).
    public var clientCount: Int { state.withLock { $0.clients.count } }

    private static func sweep(_ state: inout State, at now: Double, window: Double) {
        state.changesSinceSweep = 0
        state.clients = state.clients.filter { _, use in
            use.running > 0 || use.total(at: now, window: window) >= forgettable
        }
    }
}
