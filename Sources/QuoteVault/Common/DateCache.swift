import Foundation
import PGClient
import Synchronization

/// Values per date kept in memory, for what never changes once a date has it (the quote of a date, its encoded
/// answer), so entries never go stale. Bounded: cleared when full.
public final class DateCache<Value: Sendable>: Sendable {
    private let entries = Mutex<[PGDate: Value]>([:])
    private let capacity: Int

    public init(capacity: Int) { self.capacity = capacity }

    public subscript(date: PGDate) -> Value? {
        get { entries.withLock { $0[date] } }
        set {
            entries.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[date] = newValue
            }
        }
    }
}
