import CivilCalendar
import Foundation

/// A calendar date without time or time zone (PostgreSQL `date`), e.g. a publication date.
/// Encodes to JSON as "YYYY-MM-DD".
public struct PGDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    /// A valid Gregorian date in years 1...9999, or nil.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly "YYYY-MM-DD"; nil for anything else or an impossible date.
    public init?(string: String) {
        let parts = string.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = parseDigits(parts[0]), let month = parseDigits(parts[1]), let day = parseDigits(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The UTC calendar date of `date`.
    public init(_ date: Date) {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        (year, month, day) = CivilDate.date(daysSince1970: days)
    }

    /// Midnight UTC at the start of this date.
    public var date: Date {
        Date(timeIntervalSince1970: Double(CivilDate.days(year: year, month: month, day: day)) * 86_400)
    }

    /// `YYYY-MM-DD`, written digit by digit: `String(format:)` was the largest cost of the quote-of-the-day
    /// hot path (measured in bench/quotes.sh).
    public var description: String {
        var bytes: [UInt8] = Array("0000-00-00".utf8)
        for (value, last, width) in [(year, 3, 4), (month, 6, 2), (day, 9, 2)] {
            var remaining = abs(value)
            for index in stride(from: last, to: last - width, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func < (lhs: PGDate, rhs: PGDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = PGDate(string: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a date as YYYY-MM-DD")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension PGDate: PGEncodable, PGDecodable {
    public static var pgType: PGType { .date }
    public func pgEncode() -> PGBind.Value { .text(description) }
    public init(pgText text: String) throws(PGError) {
        // DateStyle=ISO prints "YYYY-MM-DD"; "infinity" and BC dates have no PGDate.
        guard let value = PGDate(string: text) else { throw .decodingFailure(PGDate.self, text) }
        self = value
    }
}

func parseDigits<S: Collection>(_ digits: S) -> Int? where S.Element == UInt8 {
    guard !digits.isEmpty, digits.count <= 9 else { return nil }
    var value = 0
    for char in digits {
        guard char >= UInt8(ascii: "0"), char <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(char - UInt8(ascii: "0"))
    }
    return value
}

func daysInMonth(year: Int, month: Int) -> Int {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
}
