import Foundation
import Synchronization

/// Throttle refusals remembered in memory until they expire, at most `capacity` of them (a flood of distinct
/// keys cannot grow it without bound; past the capacity a refusal is simply not remembered).
final class RecentRefusals: Sendable {
    private let until = Mutex<[String: ContinuousClock.Instant]>([:])
    private let capacity: Int

    init(capacity: Int = 10_000) { self.capacity = capacity }

    /// Whole seconds left of the refusal of `key`, or nil when there is none.
    func remaining(_ key: String) -> Int? {
        let now = ContinuousClock.now
        return until.withLock { until -> Int? in
            guard let end = until[key] else { return nil }
            guard end > now else {
                until[key] = nil
                return nil
            }
            return max(1, Int((end - now).components.seconds) + 1)
        }
    }

    func remember(_ key: String, seconds: Int) {
        let now = ContinuousClock.now
        until.withLock { until in
            if until.count >= capacity { until = until.filter { $0.value > now } }
            guard until.count < capacity else { return }
            until[key] = now + .seconds(seconds)
        }
    }
}
