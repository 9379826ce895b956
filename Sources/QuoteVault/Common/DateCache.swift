import Foundation
import PGClient

/// Values per date kept in memory, for what never changes once a date has it (the quote of a date, its encoded
/// answer), so entries never go stale. Bounded: cleared when full.
public final class DateCache<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `entries` is guarded by `lock`.
    private let lock = NSLock()
    private var entries: [PGDate: Value] = [:]
    private let capacity: Int

    public init(capacity: Int) { self.capacity = capacity }

    public subscript(date: PGDate) -> Value? {
        get { lock.withLock { entries[date] } }
        set {
            lock.withLock {
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[date] = newValue
            }
        }
    }
}
