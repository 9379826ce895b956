internal import CLibPQ
import Synchronization

/// Since when a connection has waited for an answer from the server, and the means to cancel what it waits for.
///
/// The pool's reaper cancels a wait that lasts past the statement timeout (plus a grace): one the server's own
/// `statement_timeout` does not cover. That is a commit waiting for a synchronous standby, since PostgreSQL stops
/// the statement timeout before it commits; cancelled, the commit ends with PostgreSQL's warning that the standby
/// has not confirmed it, which the connection turns into a failure (`takeUnconfirmedCommit`): never acknowledged.
///
/// `@unchecked Sendable`: `canceller` is only passed to `PQcancel`, which libpq documents as safe from any
/// thread; the state is in a `Mutex`.
final class AnswerWatch: @unchecked Sendable {
    private let canceller: OpaquePointer
    private let waitingSince = Mutex<ContinuousClock.Instant?>(nil)
    /// While set, waits are never cancelled (work that lifted the statement timeout itself).
    private let unlimited = Mutex(false)

    init?(_ connection: OpaquePointer) {
        guard let canceller = PQgetCancel(connection) else { return nil }
        self.canceller = canceller
    }

    deinit { PQfreeCancel(canceller) }

    /// Runs `body`, a blocking call that waits for the server, as one wait.
    func waiting<T>(_ body: () throws -> T) rethrows -> T {
        answered()
        defer { waitingSince.withLock { $0 = nil } }
        return try body()
    }

    /// An answer came (or a wait begins): the clock starts again.
    func answered() { waitingSince.withLock { $0 = .now } }

    /// The wait is over.
    func idle() { waitingSince.withLock { $0 = nil } }

    func setUnlimited(_ value: Bool) { unlimited.withLock { $0 = value } }

    /// Cancels the current wait when it began more than `limit` ago; the clock then starts again, so a wait that
    /// ignores the cancel is cancelled again a `limit` later, not at every check.
    func cancelIfWaiting(longerThan limit: Duration, now: ContinuousClock.Instant) {
        guard !unlimited.withLock({ $0 }) else { return }
        let overdue = waitingSince.withLock { since in
            guard let started = since, now - started > limit else { return false }
            since = now
            return true
        }
        guard overdue else { return }
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(canceller, &message, Int32(message.count))
    }
}
