import Foundation
import QuoteVault
import XCTest

/// The import's reading at bulk speed: JSON Lines split at their bytes and parsed on every core, and ASCII rows
/// already normalised taken as they are, with the records and verdicts of the general path.
final class ImportReadingTests: XCTestCase {
    /// What `jsonLines` made of each line before: JSONSerialization per line, the line's own number.
    private func slowRecords(_ text: String) -> [QuoteRecord] {
        var records: [QuoteRecord] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let object = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [String: Any]
            records.append(
                QuoteRecord(
                    line: index + 1, text: object?["text"] as? String, author: object?["author"] as? String,
                    category: object?["category"] as? String))
        }
        return records
    }

    func testJSONLinesGiveTheRecordsOfJSONSerializationLineByLine() throws {
        let lines = [
            #"{"text": "Plain", "author": "Ada", "category": "love"}"#,
            "",
            #"  {"text":"Escapes \" \\ \/ \n \t \u00e9 \ud83d\ude00","author":"Zoë \u0041","category":"wisdom"}  "#,
            #"{"text": 42, "author": null, "category": ["love"]}"#,
            #"{"author": "Only author"}"#,
            "not json at all",
            #"["an", "array"]"#,
            #""a string""#,
            #"{"text": "unterminated"#,
            "\u{00A0}" + #"{"text": "after a no-break space", "author": "A", "category": "love"}"#,
            #"{"text": "Élan d'été — naïve", "author": "Ünïcödé", "category": "HUMOR", "extra": {"a": [1, 2]}}"#,
            "   ",
            #"{"text": "last line, no newline", "author": "B", "category": "success"}"#,
        ]
        let text = lines.joined(separator: "\n")
        let records = try QuoteFileReader.jsonLines(text)
        XCTAssertEqual(records, slowRecords(text))
        XCTAssertEqual(records.map(\.line), [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13])
        XCTAssertEqual(records[1].text, "Escapes \" \\ / \n \t é 😀")
        XCTAssertEqual(records[1].author, "Zoë A")
        XCTAssertEqual(records[2], QuoteRecord(line: 4), "values that are not strings are missing")
        XCTAssertEqual(records[5], QuoteRecord(line: 7), "a line that is not an object has no fields")
    }

    func testManyLinesKeepTheirOrderAndNumbersAcrossChunks() throws {
        let count = 45_001
        var text = ""
        for index in 1...count {
            let line = #"{"text": "Quote \#(index)", "author": "A", "category": "love"}"#
            text += (index % 1_000 == 0 ? "" : line) + "\n"
        }
        let records = try QuoteFileReader.jsonLines(text)
        let expected = (1...count).filter { $0 % 1_000 != 0 }
        XCTAssertEqual(records.map(\.line), expected)
        XCTAssertEqual(records.map(\.text), expected.map { "Quote \($0)" })
    }

    func testAlreadyNormalisedASCIIIsTakenAsItIsAndEverythingElseNormalised() {
        let cases: [(String, String)] = [
            ("Plain text, punctuation!", "Plain text, punctuation!"),
            ("  leading", "leading"), ("trailing ", "trailing"), ("two  spaces", "two spaces"),
            ("tab\there", "tab here"), ("line\r\nbreak", "line break"), ("\u{0B}vertical\u{0C}", "vertical"),
            ("no-break\u{00A0}space", "no-break space"), ("ideographic\u{3000}space", "ideographic space"),
            ("caf\u{00E9}  au lait", "café au lait"), ("", ""), (" ", ""), ("x", "x"), ("a\u{7F}b", "a\u{7F}b"),
        ]
        for (input, output) in cases {
            XCTAssertEqual(QuoteImporter.normaliseWhitespace(input), output, input.debugDescription)
        }
    }

    func testLengthsAreCountedInCharactersOnBothPaths() {
        func verdict(_ text: String) -> Bool {
            if case .success = QuoteImporter.validate(QuoteRecord(line: 1, text: text, author: "A", category: "love")) {
                return true
            }
            return false
        }
        XCTAssertTrue(verdict(String(repeating: "x", count: 300)))
        XCTAssertFalse(verdict(String(repeating: "x", count: 301)))
        XCTAssertTrue(verdict(String(repeating: "é", count: 300)), "600 bytes, 300 characters")
        XCTAssertFalse(verdict(String(repeating: "é", count: 301)))
        XCTAssertTrue(verdict(String(repeating: "e\u{301}", count: 300)), "one character each")
    }
}
