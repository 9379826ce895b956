import CivilCalendar
import Foundation

/// `Date` is a `timestamptz`, sent as UTC text with millisecond precision
/// ("2024-05-01 12:34:56.789+00"). Reading relies on the session settings PGConnection
/// forces (DateStyle=ISO, TimeZone=UTC), so values never depend on the server's locale.
extension Date: PGEncodable, PGDecodable {
    public static var pgType: PGType { .timestamptz }

    public func pgEncode() -> PGBind.Value {
        let millis = Int64((timeIntervalSince1970 * 1000).rounded())
        let days = Int(millis.floorDiv(86_400_000))
        let msOfDay = Int(millis - Int64(days) * 86_400_000)
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        return .text(String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%03d+00", year, month, day,
            msOfDay / 3_600_000, msOfDay / 60_000 % 60, msOfDay / 1000 % 60, msOfDay % 1000))
    }

    public init(pgText text: String) throws(PGError) {
        switch text {
        // PostgreSQL's open-ended timestamps map to Foundation's.
        case "infinity": self = .distantFuture
        case "-infinity": self = .distantPast
        default:
            var text = text
            guard let micros = text.withUTF8(parseISOTimestamp) else {
                throw .decodingFailure(Date.self, text)
            }
            // One exact integer, one correctly rounded division: a Date stored with millisecond
            // precision comes back bit-identical to Date(timeIntervalSince1970: ms / 1000).
            self = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        }
    }
}

extension Int64 {
    fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// Parses "YYYY-MM-DD[ HH:MM:SS[.ffffff][±HH[:MM[:SS]]]]" into microseconds since 1970, exactly.
/// A missing offset (plain `timestamp`) is read as UTC; a date alone is midnight UTC.
func parseISOTimestamp(_ chars: UnsafeBufferPointer<UInt8>) -> Int64? {
    var index = 0
    func number(_ count: Int) -> Int? {
        guard index + count <= chars.count, let value = parseDigits(chars[index..<index + count]) else { return nil }
        index += count
        return value
    }
    // Bytes, not Characters: comparing Characters costs a grapheme lookup per call (perf showed it on list pages).
    func expect(_ char: Unicode.Scalar) -> Bool {
        guard index < chars.count, chars[index] == UInt8(ascii: char) else { return false }
        index += 1
        return true
    }
    // Years past 9999 print with more digits.
    var yearDigits = 0
    while index + yearDigits < chars.count, chars[index + yearDigits] != UInt8(ascii: "-") { yearDigits += 1 }
    guard yearDigits >= 4, let year = number(yearDigits), expect("-"), let month = number(2), expect("-"),
          let day = number(2), (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day)
    else { return nil }
    let days = CivilDate.days(year: year, month: month, day: day)
    if index == chars.count { return Int64(days) * 86_400_000_000 }

    guard expect(" ") || expect("T"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
          let second = number(2), hour < 24, minute < 60, second < 61 else { return nil }
    var micros = 0
    if expect(".") {
        var digits = 0
        while index < chars.count, let digit = parseDigits(chars[index..<index + 1]) {
            guard digits < 6 else { return nil }
            micros = micros * 10 + digit
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        for _ in digits..<6 { micros *= 10 }
    }
    var offset = 0
    if index < chars.count {
        let sign: Int
        if expect("+") { sign = 1 } else if expect("-") { sign = -1 } else if expect("Z") { sign = 0 } else { return nil }
        if sign != 0 {
            guard let offsetHours = number(2) else { return nil }
            var offsetSeconds = offsetHours * 3600
            if expect(":") {
                guard let offsetMinutes = number(2) else { return nil }
                offsetSeconds += offsetMinutes * 60
                if expect(":") {
                    guard let extra = number(2) else { return nil }
                    offsetSeconds += extra
                }
            }
            offset = sign * offsetSeconds
        }
    }
    guard index == chars.count else { return nil }
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
    return Int64(seconds) * 1_000_000 + Int64(micros)
}
