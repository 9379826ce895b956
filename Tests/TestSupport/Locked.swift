import Synchronization

/// A value shared between test tasks.
public final class Locked<Value: Sendable>: Sendable {
    private let stored: Mutex<Value>
    public init(_ value: Value) { stored = Mutex(value) }
    public var value: Value {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
    /// A read-modify-write in one hold of the lock (`value.append(…)` reads and writes in two).
    public func withLock<R: Sendable, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        try stored.withLock { (value: inout Value) throws(E) -> R in try body(&value) }
    }
}
