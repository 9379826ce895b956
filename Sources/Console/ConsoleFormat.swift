import Foundation

/// How the console writes values: dates in UTC, to the minute.
enum ConsoleFormat {
    static func date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    /// ISO 8601 in UTC to the second, for exports (a value style: cheap per row, safe across threads).
    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
