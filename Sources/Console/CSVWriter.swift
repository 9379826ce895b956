/// CSV for the console's exports (RFC 4180: every field quoted, quotes doubled, CRLF lines). A field that a
/// spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR) gets a leading `'`, so a
/// quote or a user agent someone typed cannot run in an owner's spreadsheet.
enum CSVWriter {
    /// The lines of `rows`, after `header`'s when there is one (a streamed export sends its header alone first).
    static func document(header: [String]?, rows: [[String]]) -> [UInt8] {
        var text = header.map(line) ?? ""
        for row in rows { text += line(row) }
        return Array(text.utf8)
    }

    private static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    private static func field(_ value: String) -> String {
        let risky: Set<Character> = ["=", "+", "-", "@", "\t", "\r"]
        let safe = value.first.map(risky.contains) == true ? "'" + value : value
        return "\"" + safe.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
