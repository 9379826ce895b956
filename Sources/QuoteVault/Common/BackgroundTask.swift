import Foundation
import Logging
import Synchronization

/// A background loop's task, cancellable from any thread.
final class BackgroundTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func set(_ new: Task<Void, Never>) { task.withLock { $0 = new } }

    /// Cancels the loop and waits until it has ended, so that nothing of it still runs when the process exits
    /// (a pass in flight finishes or fails first).
    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }

    /// Runs `pass` every `interval`, up to `passes` times in a row while it still finds something to delete (it
    /// returns how many rows it deleted); a failed pass is logged as `failure` and tried again next time. The first
    /// pass waits an interval too: nothing pruned is due in a process's first minute that cannot wait.
    func prune(
        every interval: Duration, passes: Int, logger: Logger, failure: Logger.Message,
        _ pass: @escaping @Sendable () async throws -> Int
    ) {
        set(
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard !Task.isCancelled else { return }
                    do {
                        for _ in 0..<passes where try await pass() > 0 {}
                    } catch {
                        logger.warning(failure, metadata: ["error": "\(error)"])
                    }
                }
            })
    }
}
