import Synchronization

/// A value guarded by a lock, shareable by reference (a `Mutex` can't be captured by an escaping closure, e.g. a
/// `Thread`'s body).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<R: Sendable, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try mutex.withLock { (value: inout Value) throws(E) -> R in try body(&value) }
    }
}
