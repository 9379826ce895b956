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

    /// The date in a page: one unbreakable piece (a table column wraps its text, never a date).
    static func dateHTML(_ date: Date) -> HTML {
        "<time class=\"date\" datetime=\"\(timestamp(date))\">\(self.date(date))</time>"
    }

    /// ISO 8601 in UTC to the second, for exports (a value style: cheap per row, safe across threads).
    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
