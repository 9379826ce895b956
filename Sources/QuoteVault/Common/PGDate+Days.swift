import Foundation
import PGClient

extension PGDate {
    /// Days since 1970-01-01: for date arithmetic without calendars.
    public var dayNumber: Int { Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// The date `days` later (or earlier, when negative).
    public func adding(days: Int) -> PGDate {
        PGDate(Date(timeIntervalSince1970: Double(dayNumber + days) * 86_400))
    }
}
