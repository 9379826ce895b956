import Foundation
import Synchronization

/// The last hour of traffic per minute, in memory, for the console's overview: requests, 5xx answers and a
/// latency histogram per minute (fed with each `CompletedRequest`, like the Prometheus metrics; `/metrics` keeps
/// totals only).
public final class TrafficHistory: Sendable {
    public static let minutes = 60

    /// One minute: requests, 5xx answers and latency percentiles in milliseconds (nil without timed requests). The
    /// percentiles leave out refusals answered after the deliberate refusal delay (`delayedRefusals`): their
    /// time is the delay, not the server's work.
    public struct Minute: Sendable, Equatable {
        public let start: Date
        public let requests: Int
        public let errors: Int
        public var delayedRefusals = 0
        public let p50Milliseconds: Double?
        public let p99Milliseconds: Double?
    }

    /// Latency bucket `i` holds durations up to `0.1 ms × 1.3^i`: 48 buckets reach 22 s, each within 30 %.
    private static let bucketCount = 48
    private static let firstBound = 0.1
    private static let growth = 1.3

    private struct Slot {
        var minute = -1
        var requests = 0
        var errors = 0
        var delayedRefusals = 0
        var buckets = [Int](repeating: 0, count: TrafficHistory.bucketCount)
    }

    private let slots = Mutex([Slot](repeating: Slot(), count: TrafficHistory.minutes))

    public init() {}

    public func record(status: Int, duration: Duration, delayedRefusal: Bool = false, now: Date = Date()) {
        let minute = Self.minute(of: now)
        let milliseconds = duration / .milliseconds(1)
        let bucket =
            milliseconds <= Self.firstBound
            ? 0
            : min(Self.bucketCount - 1, Int((log(milliseconds / Self.firstBound) / log(Self.growth)).rounded(.up)))
        slots.withLock { slots in
            let index = minute % Self.minutes
            if slots[index].minute != minute { slots[index] = Slot(minute: minute) }
            slots[index].requests += 1
            if status >= 500 { slots[index].errors += 1 }
            if delayedRefusal {
                slots[index].delayedRefusals += 1
            } else {
                slots[index].buckets[bucket] += 1
            }
        }
    }

    /// The last hour, oldest first; minutes without traffic are zeros.
    public func recent(now: Date = Date()) -> [Minute] {
        let current = Self.minute(of: now)
        let copy = slots.withLock { $0 }
        return ((current - Self.minutes + 1)...current).map { minute in
            let slot = copy[minute % Self.minutes]
            let start = Date(timeIntervalSince1970: Double(minute) * 60)
            guard slot.minute == minute else {
                return Minute(start: start, requests: 0, errors: 0, p50Milliseconds: nil, p99Milliseconds: nil)
            }
            return Minute(
                start: start, requests: slot.requests, errors: slot.errors, delayedRefusals: slot.delayedRefusals,
                p50Milliseconds: Self.quantile(0.5, slot), p99Milliseconds: Self.quantile(0.99, slot))
        }
    }

    private static func quantile(_ q: Double, _ slot: Slot) -> Double? {
        let timed = slot.requests - slot.delayedRefusals
        guard timed > 0 else { return nil }
        let rank = Int((q * Double(timed)).rounded(.up))
        var seen = 0
        for (index, count) in slot.buckets.enumerated() {
            seen += count
            if seen >= rank { return firstBound * pow(growth, Double(index)) }
        }
        return firstBound * pow(growth, Double(bucketCount - 1))
    }

    private static func minute(of date: Date) -> Int { Int((date.timeIntervalSince1970 / 60).rounded(.down)) }
}
