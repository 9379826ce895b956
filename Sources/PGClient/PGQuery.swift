/// A SQL statement whose interpolated values become `$1…$n` parameters, never SQL text.
///
/// ```swift
/// let q: PGQuery = "SELECT * FROM quotes WHERE id = \(id) AND category = \(category)"
/// // q.sql == "SELECT * FROM quotes WHERE id = $1 AND category = $2"
/// var filter: PGQuery = "SELECT * FROM quotes WHERE true"
/// if let author { filter.append(" AND author = \(author)") }   // renumbered to $n
/// ```
///
/// Only `PGEncodable` values can be interpolated; trusted SQL text (a column name from a
/// fixed list, an ORDER BY direction) must be spelled `\(unsafeSQL: ...)`.
public struct PGQuery: ExpressibleByStringInterpolation, Sendable, CustomStringConvertible, Hashable {
    /// Placeholders are kept as bind indexes rather than "$n" text, so appending queries
    /// renumbers them without re-parsing SQL.
    enum Fragment: Sendable, Hashable {
        case sql(String)
        case placeholder(Int)  // 0-based index into binds
    }

    var fragments: [Fragment]
    /// The parameters, in `$1…$n` order.
    public private(set) var binds: [PGBind]

    /// Raw SQL with optional parameters referenced as `$1…$n`. Nothing is escaped:
    /// never build `sql` from untrusted input.
    public init(unsafeSQL sql: String, binds: [PGBind] = []) {
        self.fragments = binds.isEmpty ? [.sql(sql)] : splitPlaceholders(sql, bindCount: binds.count)
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        self.fragments = [.sql(value)]
        self.binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.query
    }

    /// The SQL text sent to the server, with `$1…$n` placeholders.
    public var sql: String { render { "$\($0 + 1)" } }

    /// The SQL with every parameter shown as `****`: safe to log.
    public var description: String { render { _ in "****" } }

    /// Appends `other`, renumbering its parameters after this query's.
    public mutating func append(_ other: PGQuery) {
        let offset = binds.count
        for fragment in other.fragments {
            switch fragment {
            case .sql(let text): appendSQL(text)
            case .placeholder(let index): fragments.append(.placeholder(index + offset))
            }
        }
        binds.append(contentsOf: other.binds)
    }

    /// `lhs` followed by `rhs`, parameters renumbered.
    public static func + (lhs: PGQuery, rhs: PGQuery) -> PGQuery {
        var result = lhs
        result.append(rhs)
        return result
    }

    mutating func appendSQL(_ text: String) {
        guard !text.isEmpty else { return }
        if case .sql(let previous) = fragments.last {
            fragments[fragments.count - 1] = .sql(previous + text)
        } else {
            fragments.append(.sql(text))
        }
    }

    mutating func appendBind(_ bind: PGBind) {
        binds.append(bind)
        fragments.append(.placeholder(binds.count - 1))
    }

    private func render(_ placeholder: (Int) -> String) -> String {
        var text = ""
        // One allocation instead of one per doubling (every pipelined statement is rendered to find its prepared
        // statement); "$nn" or "****" fits in four bytes.
        text.reserveCapacity(
            fragments.reduce(0) { length, fragment in
                if case .sql(let sql) = fragment { return length + sql.utf8.count }
                return length + 4
            })
        for fragment in fragments {
            switch fragment {
            case .sql(let sql): text += sql
            case .placeholder(let index): text += placeholder(index)
            }
        }
        return text
    }

    public static func == (lhs: PGQuery, rhs: PGQuery) -> Bool {
        lhs.sql == rhs.sql && lhs.binds.map(\.value) == rhs.binds.map(\.value)
            && lhs.binds.map(\.type) == rhs.binds.map(\.type)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sql)
    }

    /// Builds a `PGQuery` from literal SQL and interpolated parameters.
    public struct StringInterpolation: StringInterpolationProtocol {
        var query = PGQuery(stringLiteral: "")

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            query.appendSQL(literal)
        }

        /// A parameter: `$n` in the SQL, the value in `binds`. Optionals bind NULL.
        public mutating func appendInterpolation<T: PGEncodable>(_ value: T) {
            query.appendBind(PGBind(value))
        }

        /// An optional parameter, bound as above (its own overload, so that the compiler does not warn of a debug
        /// description: the value is bound, never printed).
        public mutating func appendInterpolation<T: PGEncodable>(_ value: T?) {
            query.appendBind(PGBind(value))
        }

        /// Trusted SQL text, inserted verbatim. Never pass user input.
        public mutating func appendInterpolation(unsafeSQL text: String) {
            query.appendSQL(text)
        }

        /// An identifier (table or column name), double-quoted and escaped.
        public mutating func appendInterpolation(identifier: String) {
            query.appendSQL("\"" + identifier.replacing("\"", with: "\"\"") + "\"")
        }

        /// Another query (e.g. a WHERE fragment), its parameters renumbered.
        public mutating func appendInterpolation(_ fragment: PGQuery) {
            query.append(fragment)
        }
    }
}

extension Sequence where Element == PGQuery {
    /// The queries joined by trusted SQL `separator` (e.g. `" AND "`), parameters renumbered.
    public func joined(separator: String) -> PGQuery {
        var result = PGQuery(stringLiteral: "")
        for (index, query) in enumerated() {
            if index > 0 { result.appendSQL(separator) }
            result.append(query)
        }
        return result
    }
}

/// Splits raw SQL into text and `$n` placeholders, skipping string literals, quoted
/// identifiers, dollar-quoted bodies and comments, so a query built with
/// `init(unsafeSQL:binds:)` can still be appended to another and renumbered.
func splitPlaceholders(_ sql: String, bindCount: Int) -> [PGQuery.Fragment] {
    let chars = Array(sql.utf8)
    var fragments = [PGQuery.Fragment]()
    var textStart = 0
    var index = 0

    func isIdentChar(_ char: UInt8) -> Bool {
        char == UInt8(ascii: "_") || char == UInt8(ascii: "$") || char >= 0x80
            || (char >= UInt8(ascii: "a") && char <= UInt8(ascii: "z"))
            || (char >= UInt8(ascii: "A") && char <= UInt8(ascii: "Z"))
            || (char >= UInt8(ascii: "0") && char <= UInt8(ascii: "9"))
    }
    func isDigit(_ char: UInt8) -> Bool { char >= UInt8(ascii: "0") && char <= UInt8(ascii: "9") }
    func flushText(upTo end: Int) {
        if end > textStart {
            fragments.append(.sql(String(decoding: chars[textStart..<end], as: UTF8.self)))
        }
    }

    while index < chars.count {
        let char = chars[index]
        switch char {
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            // E'...' strings allow backslash escapes; standard strings and quoted identifiers only a doubled quote.
            let backslashes =
                char == UInt8(ascii: "'") && index > 0
                && (chars[index - 1] == UInt8(ascii: "E") || chars[index - 1] == UInt8(ascii: "e"))
                && (index < 2 || !isIdentChar(chars[index - 2]))
            index += 1
            while index < chars.count {
                if backslashes && chars[index] == UInt8(ascii: "\\") { index += 2; continue }
                if chars[index] == char {
                    if index + 1 < chars.count && chars[index + 1] == char { index += 2; continue }
                    break
                }
                index += 1
            }
            index += 1
        case UInt8(ascii: "-") where index + 1 < chars.count && chars[index + 1] == UInt8(ascii: "-"):
            while index < chars.count && chars[index] != UInt8(ascii: "\n") { index += 1 }
        case UInt8(ascii: "/") where index + 1 < chars.count && chars[index + 1] == UInt8(ascii: "*"):
            var depth = 1
            index += 2
            while index < chars.count && depth > 0 {
                if chars[index] == UInt8(ascii: "/") && index + 1 < chars.count && chars[index + 1] == UInt8(ascii: "*")
                {
                    depth += 1; index += 2
                } else if chars[index] == UInt8(ascii: "*") && index + 1 < chars.count
                    && chars[index + 1] == UInt8(ascii: "/")
                {
                    depth -= 1; index += 2
                } else {
                    index += 1
                }
            }
        case UInt8(ascii: "$") where index == 0 || !isIdentChar(chars[index - 1]):
            var end = index + 1
            if end < chars.count && isDigit(chars[end]) {
                // $n: a placeholder.
                var number = 0
                while end < chars.count && isDigit(chars[end]) && number <= bindCount {
                    number = number * 10 + Int(chars[end] - UInt8(ascii: "0"))
                    end += 1
                }
                if (1...bindCount).contains(number) && (end == chars.count || !isDigit(chars[end])) {
                    flushText(upTo: index)
                    fragments.append(.placeholder(number - 1))
                    textStart = end
                }
                index = end
            } else {
                // $tag$ ... $tag$: skip the body.
                while end < chars.count && isIdentChar(chars[end]) && chars[end] != UInt8(ascii: "$") { end += 1 }
                if end < chars.count && chars[end] == UInt8(ascii: "$") {
                    let tag = chars[index...end]
                    var scan = end + 1
                    var closed = chars.count
                    while scan + tag.count <= chars.count {
                        if chars[scan] == UInt8(ascii: "$") && chars[scan..<scan + tag.count].elementsEqual(tag) {
                            closed = scan + tag.count
                            break
                        }
                        scan += 1
                    }
                    index = closed
                } else {
                    index = end
                }
            }
        default:
            index += 1
        }
    }
    flushText(upTo: chars.count)
    return fragments
}
