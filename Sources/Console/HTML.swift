/// A fragment of HTML built by string interpolation: literal text is markup, every interpolated `String` (or
/// number) is escaped, and only another `HTML` is inserted as it is. So nothing a user typed can become markup.
///
/// ```swift
/// let row: HTML = "<td>\(quote.text)</td>"   // quote.text escaped
/// let table: HTML = "<table>\(rows)</table>" // rows: [HTML], inserted as markup
/// ```
struct HTML: Sendable, ExpressibleByStringInterpolation {
    let rendered: String

    init(rendered: String) { self.rendered = rendered }
    init(stringLiteral value: String) { rendered = value }
    init(stringInterpolation: Interpolation) { rendered = stringInterpolation.output }

    static let empty = HTML(rendered: "")

    struct Interpolation: StringInterpolationProtocol {
        var output = ""

        init(literalCapacity: Int, interpolationCount: Int) { output.reserveCapacity(literalCapacity * 2) }
        mutating func appendLiteral(_ literal: String) { output += literal }
        mutating func appendInterpolation(_ text: String) { output += HTML.escape(text) }
        mutating func appendInterpolation(_ number: Int) { output += String(number) }
        mutating func appendInterpolation(_ html: HTML) { output += html.rendered }
        mutating func appendInterpolation(_ parts: [HTML]) { for part in parts { output += part.rendered } }
    }

    /// `&`, `<`, `>`, `"` and `'` as character references: safe in text and in quoted attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
