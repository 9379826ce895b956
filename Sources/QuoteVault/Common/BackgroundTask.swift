import Foundation

/// A background loop's task, cancellable from any thread.
final class BackgroundTask: @unchecked Sendable {
    // @unchecked: `task` is guarded by `lock`.
    private let lock = NSLock()
    private var task: Task<Void, Never>?

    func set(_ new: Task<Void, Never>) { lock.withLock { task = new } }
    func cancel() { lock.withLock { task?.cancel() } }
}
