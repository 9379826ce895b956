import Foundation
import Logging
import Synchronization

/// A background loop's task, cancellable from any thread.
final class BackgroundTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let ended = Atomic<Bool>(false)

    /// Runs `body` as the loop.
    func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock {
            $0 = Task { [self] in
                await body()
                ended.store(true, ordering: .relaxed)
            }
        }
    }

    /// Asks the loop to end; a pass in flight finishes first (see `hasEnded`).
    func cancel() { task.withLock { $0?.cancel() } }

    /// Whether the loop has ended (or never started): a graceful stop waits for it, so that nothing of it still
    /// runs when the process exits.
    var hasEnded: Bool { task.withLock { $0 == nil } || ended.load(ordering: .relaxed) }

    /// Runs `pass` every `interval`, up to `passes` times in a row while it still finds something to delete (it
    /// returns how many rows it deleted); a failed pass is logged as `failure` and tried again next time. The first
    /// pass waits an interval too: nothing pruned is due in a process's first minute that cannot wait.
    func prune(
        every interval: Duration, passes: Int, logger: Logger, failure: Logger.Message,
        _ pass: @escaping @Sendable () async throws -> Int
    ) {
        start {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                do {
                    for _ in 0..<passes where try await pass() > 0 {}
                } catch {
                    logger.warning(failure, metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
