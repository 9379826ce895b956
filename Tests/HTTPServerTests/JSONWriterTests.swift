import Foundation
import HTTPServer
import TestSupport
import XCTest

/// The hand-written JSON writer must produce what a JSON parser reads back as the same values.
final class JSONWriterTests: XCTestCase {
    /// What both of Foundation's parsers read back; they differ on a raw U+FEFF at a string's start.
    private func roundTrip(_ value: String) throws -> String? {
        var writer = JSONWriter()
        writer.raw("[")
        writer.string(value)
        writer.raw("]")
        let data = Data(writer.bytes)
        let serialized = try (JSONSerialization.jsonObject(with: data) as? [String])?.first
        let decoded = try JSONDecoder().decode([String].self, from: data).first
        XCTAssertEqual(serialized, decoded, "the two parsers read \(value.debugDescription) differently")
        return serialized
    }

    func testEscapesQuotesBackslashesAndControlCharacters() throws {
        for value in [
            "", "plain", "say \"hi\"", "back\\slash", "line\nbreak\r\t", "\u{0}\u{1}\u{1F}", "émoji 🦉 ünïcode",
            "\"\\\n", "\u{FEFF}", "\u{FEFF}lead", "mid\u{FEFF}dle", "\u{FEFF}\u{FEFF}", "a\n\u{FEFF}b",
            "\"\u{FEFF}\u{FEFF}\"", "\u{F000}\u{FEFE}\u{FFFF}",
        ] {
            XCTAssertEqual(try roundTrip(value), value)
        }
    }

    /// A fresh seed each run, and the one that once found a leading U+FEFF lost. One scalar in eight is one the
    /// writer treats specially, so they also meet each other.
    func testRandomStringsRoundTrip() throws {
        let special: [Unicode.Scalar] = ["\u{FEFF}", "\"", "\\", "\n", "\u{0}", "\u{1F}"]
        for seed in [3_795_049_790_874_149_153, UInt64.random(in: 0...UInt64.max)] {
            var rng = SplitMix64(seed: seed)
            for _ in 0..<500 {
                let scalars = (0..<Int.random(in: 0...40, using: &rng)).compactMap { _ -> Unicode.Scalar? in
                    if Int.random(in: 0..<8, using: &rng) == 0 { return special.randomElement(using: &rng) }
                    return Unicode.Scalar(
                        UInt32.random(in: 0...(Bool.random(using: &rng) ? 0x7F : 0x1F_FFF), using: &rng))
                }
                let value = String(String.UnicodeScalarView(scalars))
                XCTAssertEqual(try roundTrip(value), value, "seed \(seed)")
            }
        }
    }

    /// JSONSerialization drops a raw U+FEFF at a string's start or just after an escape (the random test once found
    /// it), so the writer escapes it there.
    func testByteOrderMarkIsEscaped() {
        var writer = JSONWriter()
        writer.string("\u{FEFF}quote")
        writer.string("a\n\u{FEFF}b\u{FEFF}c")
        XCTAssertEqual(String(decoding: writer.bytes, as: UTF8.self), #""\ufeffquote""a\n\ufeffb"# + "\u{FEFF}c\"")
    }

    func testUUIDIsLowerCaseCanonical() {
        for _ in 0..<100 {
            let id = UUID()
            var writer = JSONWriter()
            writer.uuid(id)
            XCTAssertEqual(String(decoding: writer.bytes, as: UTF8.self), "\"\(id.uuidString.lowercased())\"")
        }
    }

    func testTimestampsMatchFoundationsRFC3339WithMilliseconds() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        // Whole milliseconds, across leap days, century rules and 1970, from 1800 to 2200: within that span a Date
        // (a double of seconds since 2001) holds every millisecond to within the microsecond the writer rounds to.
        let fixed: [Int64] = [
            0, -1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, -2_208_988_800_000,
            1_709_164_800_123, 7_258_118_399_999, -5_364_662_400_000,
        ]
        var generator = SystemRandomNumberGenerator()
        let random = (0..<2_000).map { _ in Int64.random(in: -5_364_662_400_000...7_258_118_399_999, using: &generator)
        }
        for milliseconds in fixed + random {
            let date = Date(timeIntervalSinceReferenceDate: Double(milliseconds - 978_307_200_000) / 1000)
            let expected = formatter.string(from: date)
            XCTAssertEqual(Timestamp.format(date), expected, "\(milliseconds) ms")
            var writer = JSONWriter()
            writer.timestamp(date)
            XCTAssertEqual(String(decoding: writer.bytes, as: UTF8.self), "\"\(expected)\"")
        }
    }
}
