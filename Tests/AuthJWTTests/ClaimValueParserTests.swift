import AuthJWT
import Foundation
import XCTest

/// The direct JSON reader gives what `JSONDecoder` gives for a `ClaimValue`, and refuses what is not RFC 8259.
final class ClaimValueParserTests: XCTestCase {
    private func decoded(_ text: String) throws -> ClaimValue {
        try JSONDecoder().decode(ClaimValue.self, from: Data(text.utf8))
    }

    func testReadsWhatJSONDecoderReads() throws {
        let documents = [
            #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"5"}"#,
            #"[null,"5","phoenix","heartbeat",{}]"#,
            #" { "a" : [ 1 , -2.5e3 , 0 , -0 , 1E-2 , 12345678901234 ] , "b" : { } , "c" : [ ] } "#,
            #"{"t":true,"f":false,"n":null,"s":"","nested":[[[{"x":[true]}]]]}"#,
            #"{"escapes":"\"\\\/\b\f\n\r\t","unicode":"\u00e9\u4e2d\ud83d\ude00 é 中 😀"}"#,
            #""just a string""#, "42", "true", "null",
        ]
        for text in documents {
            XCTAssertEqual(try ClaimValue(jsonText: text), try decoded(text), text)
            XCTAssertEqual(try ClaimValue(jsonBytes: Array(text.utf8)), try decoded(text), text)
        }
        XCTAssertEqual(
            try ClaimValue(jsonText: #"{"a":"\ud83d\ude00"}"#), .object(["a": .string("😀")]))
    }

    func testARepeatedKeyKeepsItsLastValue() throws {
        XCTAssertEqual(try ClaimValue(jsonText: #"{"a":1,"a":2}"#), .object(["a": .number(2)]))
    }

    func testRefusesWhatIsNotJSON() {
        let refused = [
            "", " ", "{", "}", "[1,]", #"{"a":1,}"#, "[1 2]", #"{"a" 1}"#, #"{a:1}"#, "01", "-", "1.", ".5", "1e",
            "+1", "NaN", "Infinity", "1e400", "-1e400", "tru", "nul", "true false", "{} x", #""\x""#, #""\u12""#,
            #""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#, "\"a\u{01}b\"", "\"unterminated",
            "'single'", "[1]]",
        ]
        for text in refused {
            XCTAssertThrowsError(try ClaimValue(jsonText: text), text)
        }
        // Invalid UTF-8 inside a string.
        XCTAssertThrowsError(try ClaimValue(jsonBytes: [0x22, 0xC3, 0x28, 0x22]))
        XCTAssertThrowsError(try ClaimValue(jsonBytes: [0x22, 0xFF, 0x22]))
    }

    func testTheErrorSaysWhereTheTextStoppedBeingJSON() {
        XCTAssertThrowsError(try ClaimValue(jsonText: "[1,2,x]")) { error in
            XCTAssertEqual((error as? ClaimValue.JSONTextError)?.offset, 5)
        }
    }

    func testNestingIsReadToItsLimitAndRefusedPastIt() throws {
        let depth = ClaimValue.maximumJSONDepth
        let edge = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try ClaimValue(jsonText: edge)
        var levels = 0
        while case .array(let items) = value {
            levels += 1
            value = items.first ?? .null
        }
        XCTAssertEqual(levels, depth)
        let past = String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)
        XCTAssertThrowsError(try ClaimValue(jsonText: past))
        let objects = String(repeating: #"{"a":"#, count: depth + 1) + "1" + String(repeating: "}", count: depth + 1)
        XCTAssertThrowsError(try ClaimValue(jsonText: objects))
    }
}
