import Foundation

/// A value guarded by a lock.
///
/// `@unchecked Sendable`: `value` is only reachable through `withLock`, which holds `lock`.
/// (`Synchronization.Mutex` would do, but needs macOS 15 and the package supports macOS 14.)
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
