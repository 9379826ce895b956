import Foundation
import Synchronization

/// A background loop's task, cancellable from any thread.
final class BackgroundTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func set(_ new: Task<Void, Never>) { task.withLock { $0 = new } }
    func cancel() { task.withLock { $0?.cancel() } }
}
