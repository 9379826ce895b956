import Foundation
import Synchronization

/// Reads quote files: JSON Lines (the bundled corpus), a JSON array, or CSV with a header row
/// `text,author,category` (RFC 4180 quoting). Each record keeps the line it starts on, for error reports.
public enum QuoteFileReader {
    public enum ReadError: Error, CustomStringConvertible {
        case unreadable(String)
        case notAnArray
        case malformedJSON(line: Int)
        case missingColumns([String])

        public var description: String {
            switch self {
            case .unreadable(let path): return "cannot read \(path)"
            case .notAnArray: return "a JSON file must hold an array of {text, author, category} objects"
            case .malformedJSON(let line): return "invalid JSON near line \(line)"
            case .missingColumns(let columns): return "the CSV header lacks \(columns.joined(separator: ", "))"
            }
        }
    }

    /// Reads `url` by its content: `[` starts a JSON array, `{` JSON Lines, anything else CSV.
    public static func read(_ url: URL) throws -> [QuoteRecord] {
        guard let data = FileManager.default.contents(atPath: url.path) else { throw ReadError.unreadable(url.path) }
        return try read(text: String(decoding: data, as: UTF8.self))
    }

    /// Reads a file's text (an upload) by its content, as `read(_:)` does.
    public static func read(text: String) throws -> [QuoteRecord] {
        // Excel's "CSV UTF-8" (and some editors) start the file with a byte-order mark; it is not part of the data.
        let text = text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
        switch text.first(where: { !$0.isWhitespace }) {
        case "[": return try jsonArray(text)
        case "{": return try jsonLines(text)
        case nil: return []
        default: return try csv(text)
        }
    }

    /// One JSON object per line. A bulk import's million lines are split at their bytes and parsed on every core,
    /// each record in its line's place; a line the fast decoder refuses is read as before (JSONSerialization).
    public static func jsonLines(_ text: String) throws -> [QuoteRecord] {
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let chunks = min(ProcessInfo.processInfo.activeProcessorCount, max(1, lines.count / 20_000))
        let parts = Mutex([[QuoteRecord]](repeating: [], count: chunks))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let decoder = JSONDecoder()
            var records: [QuoteRecord] = []
            for index in (lines.count * chunk / chunks)..<(lines.count * (chunk + 1) / chunks) {
                if let record = jsonLine(lines[index], number: index + 1, decoder: decoder) { records.append(record) }
            }
            parts.withLock { $0[chunk] = records }
        }
        return parts.withLock { $0.flatMap { $0 } }
    }

    /// The record of one line (nil for a blank one).
    private static func jsonLine(_ line: Substring.UTF8View, number: Int, decoder: JSONDecoder) -> QuoteRecord? {
        if let object = try? decoder.decode(LineObject.self, from: Data(line)) {
            return QuoteRecord(line: number, text: object.text, author: object.author, category: object.category)
        }
        let trimmed = Substring(line).trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [String: Any] else {
            return QuoteRecord(line: number, text: nil, author: nil, category: nil)
        }
        return record(object, line: number)
    }

    /// A line's object: a field that is absent or not a string is nil, as `as? String` makes it.
    private struct LineObject: Decodable {
        var text: String?
        var author: String?
        var category: String?

        enum CodingKeys: String, CodingKey { case text, author, category }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            text = try? container.decodeIfPresent(String.self, forKey: .text)
            author = try? container.decodeIfPresent(String.self, forKey: .author)
            category = try? container.decodeIfPresent(String.self, forKey: .category)
        }
    }

    /// A JSON array of objects; each element's line is found by scanning the text.
    public static func jsonArray(_ text: String) throws -> [QuoteRecord] {
        guard let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] else {
            throw ReadError.notAnArray
        }
        let lines = elementStartLines(text)
        return array.enumerated().map { index, element in
            let line = index < lines.count ? lines[index] : index + 1
            guard let object = element as? [String: Any] else { return QuoteRecord(line: line) }
            return record(object, line: line)
        }
    }

    /// CSV with a header naming `text`, `author` and `category` (any order, other columns ignored).
    public static func csv(_ text: String) throws -> [QuoteRecord] {
        var rows = parseCSV(text)
        guard !rows.isEmpty else { return [] }
        let header = rows.removeFirst().fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let missing = ["text", "author", "category"].filter { !header.contains($0) }
        guard missing.isEmpty else { throw ReadError.missingColumns(missing) }
        let textIndex = header.firstIndex(of: "text")!, authorIndex = header.firstIndex(of: "author")!
        let categoryIndex = header.firstIndex(of: "category")!
        return rows.filter { !($0.fields.count == 1 && $0.fields[0].isEmpty) }.map { row in
            func field(_ index: Int) -> String? { index < row.fields.count ? row.fields[index] : nil }
            return QuoteRecord(
                line: row.line, text: field(textIndex), author: field(authorIndex), category: field(categoryIndex))
        }
    }

    private static func record(_ object: [String: Any], line: Int) -> QuoteRecord {
        QuoteRecord(
            line: line, text: object["text"] as? String, author: object["author"] as? String,
            category: object["category"] as? String)
    }

    /// The line on which each top-level array element starts.
    static func elementStartLines(_ text: String) -> [Int] {
        var lines: [Int] = []
        var line = 1, depth = 0, inString = false, escaped = false, expectingValue = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\n") { line += 1 }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                if depth == 1 && expectingValue { lines.append(line); expectingValue = false }
                depth += 1
                if depth == 1 { expectingValue = true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            case UInt8(ascii: ","): if depth == 1 { expectingValue = true }
            default:
                if depth == 1 && expectingValue { lines.append(line); expectingValue = false }
                if byte == UInt8(ascii: "\"") { inString = true }
            }
        }
        return lines
    }

    /// RFC 4180: fields separated by commas, optionally quoted with `"` (doubled inside); quoted fields may
    /// span lines. Returns each record with the line it starts on.
    static func parseCSV(_ text: String) -> [(line: Int, fields: [String])] {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = [], field = "", inQuotes = false, line = 1, recordLine = 1
        var characters = Array(text.replacingOccurrences(of: "\r\n", with: "\n"))[...]
        while let character = characters.popFirst() {
            if inQuotes {
                if character == "\"" {
                    if characters.first == "\"" {
                        field.append("\""); characters.removeFirst()
                    } else {
                        inQuotes = false
                    }
                } else {
                    if character == "\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"": inQuotes = true
            case ",": fields.append(field); field = ""
            case "\n":
                fields.append(field)
                records.append((recordLine, fields))
                fields = []; field = ""; line += 1; recordLine = line
            default: field.append(character)
            }
        }
        if !field.isEmpty || !fields.isEmpty { fields.append(field); records.append((recordLine, fields)) }
        return records
    }
}
