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
        for value in ["", "plain", "say \"hi\"", "back\\slash", "line\nbreak\r\t", "\u{0}\u{1}\u{1F}", "émoji 🦉 ünïcode", "\"\\\n"] {
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
}
