import Foundation
import HTTPServer
import TestSupport
import XCTest

/// The hand-written JSON writer must produce what a JSON parser reads back as the same values.
final class JSONWriterTests: XCTestCase {
    private func roundTrip(_ value: String) throws -> String? {
        var writer = JSONWriter()
        writer.raw("[")
        writer.string(value)
        writer.raw("]")
        return try (JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String])?.first
    }

    func testEscapesQuotesBackslashesAndControlCharacters() throws {
        for value in [
            "", "plain", "say \"hi\"", "back\\slash", "line\nbreak\r\t", "\u{0}\u{1}\u{1F}", "émoji 🦉 ünïcode",
            "\"\\\n",
        ] {
            XCTAssertEqual(try roundTrip(value), value)
        }
    }

    func testRandomStringsRoundTrip() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let scalars = (0..<Int.random(in: 0...40, using: &rng)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...(Bool.random(using: &rng) ? 0x7F : 0x1F_FFF), using: &rng))
            }
            let value = String(String.UnicodeScalarView(scalars))
            XCTAssertEqual(try roundTrip(value), value, "seed \(seed)")
        }
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
