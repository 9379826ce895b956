import Foundation
import QuoteVault

/// One `postgres_changes` entry of a join: a table of `public`, the events wanted and an optional filter
/// `column=op.value` with Realtime's operators `eq`, `neq`, `lt`, `lte`, `gt`, `gte` and `in.(a,b)`.
struct RealtimeSubscription: Sendable {
    enum Operator: String, Sendable {
        case eq, neq, lt, lte, gt, gte, `in`
    }

    struct Filter: Sendable {
        let column: String
        let op: Operator
        let values: [String]
        /// As the client wrote it, for the join reply.
        let text: String
    }

    let id: Int
    let event: String
    let table: String
    let filter: Filter?
    /// The columns a `select` asked for, with the primary key's (as Realtime adds them), sorted; nil for all.
    let columns: [String]?

    /// The tables a client may subscribe to (those the app uses), each with its columns.
    static let tables: Set<String> = [
        "user_favorites", "collections", "collection_quotes", "profiles", "quotes", "quote_of_day",
    ]
    /// Tables anyone may read (the anon key included); the others' rows go to their owner only.
    static let publicTables: Set<String> = ["quotes", "quote_of_day"]

    /// Why an entry is refused, for the join's error reply.
    struct Refusal: Error {
        let reason: String
    }

    /// Parses one entry of `config.postgres_changes`.
    static func parse(_ entry: JSONValue, id: Int) throws(Refusal) -> RealtimeSubscription {
        let event = entry["event"]?.stringValue?.uppercased() ?? "*"
        guard ["*", "INSERT", "UPDATE", "DELETE"].contains(event) else {
            throw Refusal(reason: "event must be *, INSERT, UPDATE or DELETE")
        }
        let schema = entry["schema"]?.stringValue ?? "public"
        guard schema == "public" else { throw Refusal(reason: "only the public schema is available") }
        guard let table = entry["table"]?.stringValue, tables.contains(table) else {
            throw Refusal(reason: "table must be one of \(tables.sorted().joined(separator: ", "))")
        }
        var filter: Filter?
        if let text = entry["filter"]?.stringValue, !text.isEmpty {
            filter = try parseFilter(text, table: table)
        }
        return RealtimeSubscription(
            id: id, event: event, table: table, filter: filter, columns: try parseSelect(entry["select"], table: table))
    }

    /// `select`: a list of column names, as supabase-swift sends it; the change then carries only those (and the
    /// primary key) in `record`, `old_record` and `columns`. Anything but a list is refused, not ignored.
    private static func parseSelect(_ value: JSONValue?, table: String) throws(Refusal) -> [String]? {
        let usage =
            #"Error parsing `select` params: expected a list of column name strings, e.g. select: ["col1", "col2"]"#
        switch value {
        case nil, .null?: return nil
        case .array(let items)?:
            let names = items.compactMap(\.stringValue)
            guard names.count == items.count else { throw Refusal(reason: usage) }
            guard !names.isEmpty, let schema = RestSchema.tables[table] else { return nil }
            for name in names where schema.column(name) == nil {
                throw Refusal(reason: "invalid column for select \(name)")
            }
            return Set(names + schema.primaryKey).sorted()
        default: throw Refusal(reason: usage)
        }
    }

    private static func parseFilter(_ text: String, table: String) throws(Refusal) -> Filter {
        let usage = "filter must be column=op.value with op one of eq, neq, lt, lte, gt, gte, in"
        guard let equals = text.firstIndex(of: "=") else { throw Refusal(reason: usage) }
        let column = String(text[..<equals])
        let rest = text[text.index(after: equals)...]
        guard let dot = rest.firstIndex(of: "."), let op = Operator(rawValue: String(rest[..<dot])) else {
            throw Refusal(reason: usage)
        }
        guard RestSchema.tables[table]?.column(column) != nil else {
            throw Refusal(reason: "\(table) has no column \(column)")
        }
        let value = String(rest[rest.index(after: dot)...])
        var values = [value]
        if op == .in {
            guard value.hasPrefix("("), value.hasSuffix(")") else { throw Refusal(reason: "in takes (a,b,…)") }
            values = value.dropFirst().dropLast().split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            }
            guard values.count <= 100 else { throw Refusal(reason: "in takes at most 100 values") }
        }
        return Filter(column: column, op: op, values: values, text: text)
    }

    /// Whether a change of `type` to a row (`record` for INSERT and UPDATE, `old_record` for DELETE) is one this
    /// subscription asked for.
    func matches(table: String, type: String, row: [String: JSONValue]?) -> Bool {
        guard table == self.table, event == "*" || event == type else { return false }
        guard let filter else { return true }
        guard let row, let value = row[filter.column] else { return false }
        return filter.accepts(value)
    }

    /// The entry as the join reply lists it back.
    var reply: JSONValue {
        var fields: [String: JSONValue] = [
            "id": .number(Double(id)), "event": .string(event), "schema": .string("public"), "table": .string(table),
        ]
        if let filter { fields["filter"] = .string(filter.text) }
        return .object(fields)
    }
}

extension RealtimeSubscription.Filter {
    /// Compares as numbers when both sides are numbers, else as text (uuids, names; ISO dates and timestamps
    /// sort as text).
    func accepts(_ value: JSONValue) -> Bool {
        let text: String
        switch value {
        case .string(let string): text = string
        case .number(let number): text = number == number.rounded() ? String(Int(number)) : String(number)
        case .bool(let flag): text = flag ? "true" : "false"
        case .null: text = "null"
        default: return false
        }
        func order(_ other: String) -> Int {
            if let left = Double(text), let right = Double(other) { return left < right ? -1 : left > right ? 1 : 0 }
            // uuids compare without regard to case, as PostgreSQL's do.
            let (left, right) = (text.lowercased(), other.lowercased())
            return left < right ? -1 : left > right ? 1 : 0
        }
        switch op {
        case .eq: return order(values[0]) == 0
        case .neq: return order(values[0]) != 0
        case .lt: return order(values[0]) < 0
        case .lte: return order(values[0]) <= 0
        case .gt: return order(values[0]) > 0
        case .gte: return order(values[0]) >= 0
        case .in: return values.contains { order($0) == 0 }
        }
    }
}
