import CivilCalendar
import Foundation

/// `Date` is a `timestamptz`, sent as UTC text with millisecond precision
/// ("2024-05-01 12:34:56.789+00"). Reading relies on the session settings PGConnection
/// forces (DateStyle=ISO, TimeZone=UTC), so values never depend on the server's locale.
extension Date: PGEncodable, PGDecodable {
    public static var pgType: PGType { .timestamptz }

    public func pgEncode() -> PGBind.Value {
        let (days, msOfDay) = CivilDate.floorDivision(Int((timeIntervalSince1970 * 1000).rounded()), 86_400_000)
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        return .text(
            String(
                format: "%04d-%02d-%02d %02d:%02d:%02d.%03d+00", year, month, day,
                msOfDay / 3_600_000, msOfDay / 60_000 % 60, msOfDay / 1000 % 60, msOfDay % 1000))
    }

    public init(pgText text: String) throws(PGError) {
        switch text {
        // PostgreSQL's open-ended timestamps map to Foundation's.
        case "infinity": self = .distantFuture
        case "-infinity": self = .distantPast
        default:
            guard let timestamp = try? PGTimestamp(pgText: text) else { throw .decodingFailure(Date.self, text) }
            self = timestamp.date
        }
    }
}

/// Parses "YYYY-MM-DD[ HH:MM:SS[.ffffff][±HH[:MM[:SS]]]]" into microseconds since 1970, exactly.
/// A missing offset (plain `timestamp`) is read as UTC; a date alone is midnight UTC.
func parseISOTimestamp(_ chars: UnsafeBufferPointer<UInt8>) -> Int64? {
    var scanner = TimestampScanner(chars: chars)
    // Years past 9999 print with more digits.
    var yearDigits = 0
    while yearDigits < chars.count, chars[yearDigits] != UInt8(ascii: "-") { yearDigits += 1 }
    guard yearDigits >= 4, let year = scanner.number(yearDigits), scanner.expect("-"), let month = scanner.number(2),
        scanner.expect("-"), let day = scanner.number(2), (1...12).contains(month),
        (1...daysInMonth(year: year, month: month)).contains(day)
    else { return nil }
    let days = CivilDate.days(year: year, month: month, day: day)
    if scanner.isAtEnd { return Int64(days) * 86_400_000_000 }

    guard scanner.expect(" ") || scanner.expect("T"), let hour = scanner.number(2), scanner.expect(":"),
        let minute = scanner.number(2), scanner.expect(":"), let second = scanner.number(2),
        hour < 24, minute < 60, second < 61
    else { return nil }
    var micros = 0
    if scanner.expect(".") {
        var digits = 0
        while let digit = scanner.number(1) {
            guard digits < 6 else { return nil }
            micros = micros * 10 + digit
            digits += 1
        }
        guard digits > 0 else { return nil }
        for _ in digits..<6 { micros *= 10 }
    }
    // The offset: `Z`, or a sign and hours, then optionally `:` minutes and `:` seconds.
    var offset = 0
    if !scanner.isAtEnd, !scanner.expect("Z") {
        let sign = scanner.expect("+") ? 1 : scanner.expect("-") ? -1 : 0
        guard sign != 0 else { return nil }
        var unit = 3600
        repeat {
            guard let value = scanner.number(2) else { return nil }
            offset += sign * value * unit
            unit /= 60
        } while unit > 0 && scanner.expect(":")
    }
    guard scanner.isAtEnd else { return nil }
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
    return Int64(seconds) * 1_000_000 + Int64(micros)
}

/// Reads a timestamp's bytes left to right. A struct, not closures capturing the position: the closures were not
/// inlined and showed in a page of quotes' profile.
private struct TimestampScanner {
    let chars: UnsafeBufferPointer<UInt8>
    var index = 0

    var isAtEnd: Bool { index == chars.count }

    /// The next `count` bytes as a decimal number, or nil (and nothing consumed) if they are not all digits.
    mutating func number(_ count: Int) -> Int? {
        guard count <= 9, index + count <= chars.count else { return nil }
        var value = 0
        for position in index..<index + count {
            let digit = Int(chars[position]) - Int(UInt8(ascii: "0"))
            guard (0...9).contains(digit) else { return nil }
            value = value * 10 + digit
        }
        index += count
        return value
    }

    /// Consumes `char` if it comes next.
    mutating func expect(_ char: Unicode.Scalar) -> Bool {
        guard index < chars.count, chars[index] == UInt8(ascii: char) else { return false }
        index += 1
        return true
    }
}
