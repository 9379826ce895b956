/// A `/rest/v1` read, parsed from PostgREST's query grammar into typed values. Names here are still the
/// client's: `RestSQL` checks each against `RestSchema` before any SQL exists.
struct RestQuery {
    indirect enum SelectItem: Equatable {
        case all
        case column(name: String, alias: String?)
        case embed(table: String, alias: String?, inner: Bool, items: [SelectItem])
    }

    enum Operator: String {
        case eq, neq, gt, gte, lt, lte, like, ilike, `is`, `in`, isdistinct
        /// POSIX regular expressions: `~` and `~*`.
        case match, imatch
        /// Full-text search: to_tsquery, plainto_tsquery, phraseto_tsquery, websearch_to_tsquery.
        case fts, plfts, phfts, wfts
    }

    enum Value: Equatable {
        case text(String)
        case list([String])
        /// A full-text query with its text search configuration (`fts(english).…`), nil for the default.
        case textSearch(configuration: String?, query: String)
    }

    indirect enum Condition: Equatable {
        case compare(column: String, op: Operator, value: Value, negated: Bool)
        case all([Condition], negated: Bool)
        case any([Condition], negated: Bool)
    }

    struct OrderTerm: Equatable {
        enum Nulls { case first, last }
        let column: String
        let descending: Bool
        let nulls: Nulls?
    }

    var select: [SelectItem] = [.all]
    /// Conditions that must all hold (query parameters on different columns are ANDed).
    var conditions: [Condition] = []
    var order: [OrderTerm] = []
    var limit: Int?
    var offset: Int?
    var onConflict: [String]?

    /// The most rows one request returns, as PostgREST's `max-rows` would.
    static let maximumRows = 1000
    /// Bounds on hostile input (README, "Bounds on /rest/v1"): items of an `in` list, items of a select (every
    /// column and embed at any depth; `*` counts once), characters of a like/ilike/match/fts pattern.
    static let maximumListItems = 1000
    static let maximumSelectItems = 40
    static let maximumPatternLength = 200
    /// Filters of one request: each comparison and each `or`/`and` group, at any depth, every parameter counted.
    static let maximumFilters = 32
    /// Levels of `or`/`and` groups inside one another.
    static let maximumGroupDepth = 4
    /// Levels of embeds inside one another (`collections(collection_quotes(quotes(*)))` is two below the top).
    static let maximumEmbedDepth = 2
    /// Rows skipped before a page: a deep offset reads every row it skips.
    static let maximumOffset = 10_000

    /// Parses the query parameters of a request.
    /// - Throws: `RestError` PGRST100 naming what could not be parsed.
    static func parse(_ parameters: [(name: String, value: String)]) throws -> RestQuery {
        var query = RestQuery()
        for (name, value) in parameters {
            switch name {
            case "select":
                query.select = try parseSelect(value, depth: 0)
                guard countItems(query.select) <= maximumSelectItems else {
                    throw RestError.pastBound(
                        "select lists at most \(maximumSelectItems) items (columns and embeds at any depth)")
                }
            case "order": query.order = try parseOrder(value)
            case "limit": query.limit = try parseCount(value, name: "limit")
            case "offset":
                let offset = try parseCount(value, name: "offset")
                guard offset <= maximumOffset else { throw RestError.pastBound("offset is at most \(maximumOffset)") }
                query.offset = offset
            case "on_conflict":
                let columns = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                guard !columns.isEmpty, columns.allSatisfy({ !$0.isEmpty }) else {
                    throw RestError(
                        status: 400, code: "42601", message: "on_conflict must name the columns of a unique key")
                }
                query.onConflict = columns
            case "columns": break  // the body's keys are what is inserted
            case "or", "and", "not.or", "not.and":
                let negated = name.hasPrefix("not.")
                let members = try parseGroup(value, depth: 0)
                query.conditions.append(
                    name.hasSuffix("or") ? .any(members, negated: negated) : .all(members, negated: negated))
            default:
                query.conditions.append(try parseFilter(column: name, value))
            }
            guard filterCount(query.conditions) <= maximumFilters else {
                throw RestError.pastBound(
                    "a request has at most \(maximumFilters) filters (comparisons and or/and groups at any depth)")
            }
        }
        return query
    }

    /// Every comparison and every group, at any depth.
    static func filterCount(_ conditions: [Condition]) -> Int {
        conditions.reduce(0) { total, condition in
            switch condition {
            case .compare: return total + 1
            case .all(let members, _), .any(let members, _): return total + 1 + filterCount(members)
            }
        }
    }

    private static func countItems(_ items: [SelectItem]) -> Int {
        items.reduce(0) { total, item in
            if case .embed(_, _, _, let inner) = item { return total + 1 + countItems(inner) }
            return total + 1
        }
    }

    private static func parseCount(_ text: String, name: String) throws -> Int {
        guard let value = Int(text), value >= 0 else {
            throw RestError.parse("\(name) must be a non-negative integer")
        }
        return value
    }

    // MARK: select

    static func parseSelect(_ text: String, depth: Int) throws -> [SelectItem] {
        guard depth <= maximumEmbedDepth else {
            throw RestError.pastBound("embeds nest at most \(maximumEmbedDepth) levels")
        }
        let parts = try splitTopLevel(text)
        guard !parts.isEmpty else { throw RestError.parse("select is empty") }
        return try parts.map { part in
            if part == "*" { return .all }
            var head = part
            var inner: [SelectItem]?
            if let open = part.firstIndex(of: "(") {
                guard part.hasSuffix(")") else { throw RestError.parse("unbalanced parentheses in select: \(part)") }
                head = String(part[..<open])
                inner = try parseSelect(
                    String(part[part.index(after: open)..<part.index(before: part.endIndex)]), depth: depth + 1)
            }
            var alias: String?
            if let colon = head.firstIndex(of: ":"), !head[colon...].hasPrefix("::") {
                alias = String(head[..<colon])
                head = String(head[head.index(after: colon)...])
            }
            if head.contains("::") { throw RestError.parse("casts in select are not supported: \(part)") }
            if let alias { try checkIdentifier(alias) }
            if let inner {
                let inner_ = head.hasSuffix("!inner")
                let table = inner_ ? String(head.dropLast("!inner".count)) : head
                try checkIdentifier(table)
                return .embed(table: table, alias: alias, inner: inner_, items: inner)
            }
            try checkIdentifier(head)
            return .column(name: head, alias: alias)
        }
    }

    /// Aliases and names are plain identifiers; anything else is refused before it could reach SQL.
    static func checkIdentifier(_ name: String) throws {
        guard name.utf8.count <= 63, name.first?.isNumber == false,
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else { throw RestError.parse("not a valid name: \(name)") }
    }

    // MARK: order

    static func parseOrder(_ text: String) throws -> [OrderTerm] {
        try splitTopLevel(text).map { term in
            var parts = term.split(separator: ".").map(String.init)
            guard let column = parts.first else { throw RestError.parse("empty order term") }
            try checkIdentifier(column)
            parts.removeFirst()
            var descending = false
            var nulls: OrderTerm.Nulls?
            for modifier in parts {
                switch modifier {
                case "asc": descending = false
                case "desc": descending = true
                case "nullsfirst": nulls = .first
                case "nullslast": nulls = .last
                default: throw RestError.parse("unknown order modifier \(modifier) in \(term)")
                }
            }
            return OrderTerm(column: column, descending: descending, nulls: nulls)
        }
    }

    // MARK: filters

    /// `column=[not.]op.value`.
    static func parseFilter(column: String, _ text: String) throws -> Condition {
        if column.contains(".") { throw RestError.parse("filters on embedded resources are not supported: \(column)") }
        try checkIdentifier(column)
        var rest = Substring(text)
        var negated = false
        if rest.hasPrefix("not.") {
            negated = true
            rest = rest.dropFirst(4)
        }
        guard let dot = rest.firstIndex(of: ".") else { throw RestError.parse("unknown operator in \(column)=\(text)") }
        var name = String(rest[..<dot])
        var configuration: String?
        // `fts(english)`: the operator with its text search configuration.
        if let open = name.firstIndex(of: "("), name.hasSuffix(")") {
            configuration = String(name[name.index(after: open)..<name.index(before: name.endIndex)])
            name = String(name[..<open])
        }
        guard let op = Operator(rawValue: name) else { throw RestError.parse("unknown operator in \(column)=\(text)") }
        let raw = String(rest[rest.index(after: dot)...])
        switch op {
        case .fts, .plfts, .phfts, .wfts:
            return .compare(
                column: column, op: op,
                value: .textSearch(configuration: configuration, query: try bounded(unquote(raw))),
                negated: negated)
        default:
            guard configuration == nil else {
                throw RestError.parse("only full-text operators take a configuration: \(column)=\(text)")
            }
            return .compare(column: column, op: op, value: try parseValue(raw, op: op), negated: negated)
        }
    }

    private static func parseValue(_ raw: String, op: Operator) throws -> Value {
        switch op {
        case .in:
            guard raw.hasPrefix("("), raw.hasSuffix(")") else { throw RestError.parse("in expects (a,b,...): \(raw)") }
            let items = try splitTopLevel(String(raw.dropFirst().dropLast()), keepEmpty: true).map(unquote)
            guard items.count <= maximumListItems else {
                throw RestError.pastBound("in lists at most \(maximumListItems) values")
            }
            return .list(items)
        case .is:
            guard ["null", "true", "false", "unknown"].contains(raw.lowercased()) else {
                throw RestError.parse("is expects null, true, false or unknown")
            }
            return .text(raw.lowercased())
        case .like, .ilike:
            // `*` is PostgREST's alias for `%` (URL-friendly).
            return .text(try bounded(unquote(raw)).replacingOccurrences(of: "*", with: "%"))
        case .match, .imatch:
            return .text(try bounded(unquote(raw)))
        default:
            return .text(unquote(raw))
        }
    }

    /// A pattern within `maximumPatternLength` characters (a long pattern costs every row it is matched against).
    static func bounded(_ pattern: String) throws -> String {
        guard pattern.count <= maximumPatternLength else {
            throw RestError.pastBound(
                "a like, ilike, match or full-text pattern is at most \(maximumPatternLength) characters")
        }
        return pattern
    }

    /// The members of `(a.eq.1,b.lt.2,and(c.is.null,d.gt.3))`.
    static func parseGroup(_ text: String, depth: Int) throws -> [Condition] {
        guard depth < maximumGroupDepth else {
            throw RestError.pastBound("or/and groups nest at most \(maximumGroupDepth) levels")
        }
        guard text.hasPrefix("("), text.hasSuffix(")") else { throw RestError.parse("expected (…) in \(text)") }
        return try splitTopLevel(String(text.dropFirst().dropLast())).map { member in
            for (prefix, any, negated) in [
                ("or(", true, false), ("and(", false, false), ("not.or(", true, true), ("not.and(", false, true),
            ]
            where member.hasPrefix(prefix) {
                let inner = try parseGroup(String(member.dropFirst(prefix.count - 1)), depth: depth + 1)
                return any ? .any(inner, negated: negated) : .all(inner, negated: negated)
            }
            guard let dot = member.firstIndex(of: ".") else {
                throw RestError.parse("expected column.operator.value: \(member)")
            }
            return try parseFilter(column: String(member[..<dot]), String(member[member.index(after: dot)...]))
        }
    }

    /// Splits on commas outside parentheses and double quotes.
    static func splitTopLevel(_ text: String, keepEmpty: Bool = false) throws -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            switch character {
            case "\\" where quoted: escaped = true; current.append(character)
            case "\"": quoted.toggle(); current.append(character)
            case "(" where !quoted: depth += 1; current.append(character)
            case ")" where !quoted:
                depth -= 1
                guard depth >= 0 else { throw RestError.parse("unbalanced parentheses in \(text)") }
                current.append(character)
            case "," where !quoted && depth == 0:
                parts.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            default: current.append(character)
            }
        }
        guard depth == 0, !quoted else { throw RestError.parse("unbalanced parentheses or quotes in \(text)") }
        parts.append(current.trimmingCharacters(in: .whitespaces))
        return keepEmpty ? parts : parts.filter { !$0.isEmpty }
    }

    /// `"a,b"` → `a,b`, with `\"` and `\\` unescaped; bare values as they are.
    static func unquote(_ value: String) -> String {
        guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return value }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
