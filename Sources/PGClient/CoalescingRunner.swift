import Synchronization

/// Runs a job per key, one at a time per key, and answers every request that arrives while it runs with one
/// more run after it, not one each.
///
/// For listeners of `NOTIFY`: a burst of notifications about one user (every write to its library notifies) needs
/// one look at the user's current state after the burst, since each look reads the state as it is then. Requests
/// for different keys run side by side.
public final class CoalescingRunner<Key: Hashable & Sendable>: Sendable {
    private struct State {
        var running: Set<Key> = []
        /// Keys asked for again while they run.
        var again: Set<Key> = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Runs `job` for `key` now, or, if a job for `key` is running, once more after it (that job runs again; the
    /// `job` given here is dropped, so a caller passes the same job for a key each time).
    public func request(_ key: Key, _ job: @escaping @Sendable () async -> Void) {
        let start = state.withLock { state -> Bool in
            guard !state.running.contains(key) else {
                state.again.insert(key)
                return false
            }
            state.running.insert(key)
            return true
        }
        guard start else { return }
        Task {
            repeat {
                await job()
            } while state.withLock { state in
                if state.again.remove(key) != nil { return true }
                state.running.remove(key)
                return false
            }
        }
    }

    /// Whether a job for `key` is running or asked for again (for tests).
    public func isBusy(_ key: Key) -> Bool { state.withLock { $0.running.contains(key) } }
}
