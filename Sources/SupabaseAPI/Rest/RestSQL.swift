import Foundation
import PGClient
import QuoteVault

/// Turns a parsed `RestQuery` into SQL: identifiers only from `RestSchema` (quoted), every value a bind
/// parameter cast to its column's type, and the table's row rule added to every statement it touches.
struct RestSQL {
    let caller: SupabaseCaller

    private func quoted(_ identifier: String) -> String { "\"\(identifier)\"" }

    func table(_ name: String) throws -> RestSchema.Table {
        guard let table = RestSchema.tables[name] else { throw RestError.unknownTable(name) }
        return table
    }

    func column(_ name: String, of table: RestSchema.Table) throws -> RestSchema.Column {
        guard let column = table.column(name) else { throw RestError.unknownColumn(name, table: table.name) }
        return column
    }

    /// The row rule of `table` (aliased `alias`) for this caller, as a predicate: public rows for everyone, owned
    /// rows for their owner, every row for the service role.
    func rule(_ table: RestSchema.Table, alias: String) -> PGQuery {
        guard caller != .serviceRole, let owner = table.owner else { return "TRUE" }
        guard let user = caller.user else { return "FALSE" }
        return owner.owned(alias, by: user.userID)
    }

    // MARK: select lists and embedding

    /// `alias.col AS "name", (embedded subquery) AS "name", …` for the select items of `table`. An embedded array
    /// (a to-many embed) is allowed once, at the first level, with at most `RestQuery.maximumRows` rows: its rows
    /// then never multiply by another array's or the page's beyond what the caller's own rows hold.
    func projection(_ items: [RestQuery.SelectItem], of table: RestSchema.Table, alias: String, depth: Int) throws
        -> PGQuery
    {
        var parts: [PGQuery] = []
        var arrays = 0
        for item in items {
            switch item {
            case .all:
                parts += table.columns.map { PGQuery(unsafeSQL: "\(alias).\(quoted($0.name)) AS \(quoted($0.name))") }
            case .column(let name, let label):
                let column = try column(name, of: table)
                parts.append(PGQuery(unsafeSQL: "\(alias).\(quoted(column.name)) AS \(quoted(label ?? column.name))"))
            case .embed(let name, let label, _, let inner):
                let (target, relation) = try embedding(name, from: table)
                let child = "t\(depth + 1)"
                let join = "\(child).\(quoted(relation.foreign)) = \(alias).\(quoted(relation.local))"
                // The related rows the caller may see.
                let related: PGQuery =
                    " FROM \(unsafeSQL: quoted(target.name)) \(unsafeSQL: child) WHERE \(unsafeSQL: join) AND "
                    + rule(target, alias: child)
                let named = quoted(label ?? target.name)
                if let countLabel = Self.countAggregate(inner, of: target) {
                    // `collection_quotes(count)`: counted in the database.
                    let count = "json_build_object('\(countLabel)', count(*))"
                    let value = relation.cardinality == .toMany ? "json_build_array(\(count))" : count
                    parts.append("(SELECT \(unsafeSQL: value)\(related)) AS \(unsafeSQL: named)")
                    continue
                }
                let columns = try projection(inner, of: target, alias: child, depth: depth + 1)
                guard relation.cardinality == .toMany else {
                    parts.append(
                        "(SELECT row_to_json(e) FROM (SELECT \(columns)\(related)) e) AS \(unsafeSQL: named)")
                    continue
                }
                arrays += 1
                guard depth == 0, arrays == 1 else {
                    throw RestError.pastBound("a read embeds at most 1 array (a to-many embed), at the first level")
                }
                let rows: PGQuery = "SELECT \(columns)\(related) LIMIT \(RestQuery.maximumRows)"
                parts.append("(SELECT coalesce(json_agg(e), '[]'::json) FROM (\(rows)) e) AS \(unsafeSQL: named)")
            }
        }
        guard !parts.isEmpty else { throw RestError.parse("select names no column") }
        return parts.joined(separator: ", ")
    }

    /// The key of a `count` aggregate when an embed selects only `count` (or `alias:count`) from a table that has
    /// no such column; nil otherwise. Labels are identifiers (checked by the parser).
    private static func countAggregate(_ items: [RestQuery.SelectItem], of table: RestSchema.Table) -> String? {
        guard items.count == 1, case .column(let name, let alias) = items[0], name == "count",
            table.column("count") == nil
        else { return nil }
        return alias ?? "count"
    }

    private func embedding(_ name: String, from table: RestSchema.Table) throws -> (
        RestSchema.Table, RestSchema.Relation
    ) {
        guard let relation = table.relation(to: name), let target = RestSchema.tables[name] else {
            throw RestError(
                status: 400, code: "PGRST200",
                message: "Could not find a relationship between '\(table.name)' and '\(name)' in the schema cache")
        }
        return (target, relation)
    }

    /// `!inner` embeds keep only rows that have a visible related row.
    func innerJoins(_ items: [RestQuery.SelectItem], of table: RestSchema.Table, alias: String) throws -> [PGQuery] {
        try items.compactMap { item in
            guard case .embed(let name, _, true, _) = item else { return nil }
            let (target, relation) = try embedding(name, from: table)
            let source =
                "\(quoted(target.name)) i WHERE i.\(quoted(relation.foreign)) = \(alias).\(quoted(relation.local))"
            return "EXISTS (SELECT 1 FROM \(unsafeSQL: source) AND \(rule(target, alias: "i")))"
        }
    }

    // MARK: conditions

    func condition(_ condition: RestQuery.Condition, of table: RestSchema.Table, alias: String) throws -> PGQuery {
        switch condition {
        case .all(let members, let negated), .any(let members, let negated):
            let isAll: Bool
            if case .all = condition { isAll = true } else { isAll = false }
            guard !members.isEmpty else { return PGQuery(unsafeSQL: isAll != negated ? "TRUE" : "FALSE") }
            let group = try members.map { try self.condition($0, of: table, alias: alias) }
                .joined(separator: isAll ? " AND " : " OR ")
            return "\(unsafeSQL: negated ? "NOT (" : "(")\(group))"
        case .compare(let name, let op, let value, let negated):
            let column = try column(name, of: table)
            let target = "\(alias).\(quoted(column.name))"
            var test: PGQuery
            switch (op, value) {
            case (.is, .text(let keyword)):
                if keyword != "null", column.type != "boolean" {
                    throw RestError(
                        status: 400, code: "42804",
                        message: "argument of IS \(keyword.uppercased()) must be type boolean, not type \(column.type)")
                }
                let literal =
                    ["null": "NULL", "true": "TRUE", "false": "FALSE", "unknown": "UNKNOWN"][keyword] ?? "NULL"
                test = PGQuery(unsafeSQL: "\(target) IS \(literal)")
            case (.in, .list(let items)):
                guard !items.isEmpty else { test = "FALSE"; break }
                test = "\(unsafeSQL: target) IN (\(items.map { bound($0, as: column.type) }.joined(separator: ", ")))"
            case (_, .textSearch(let configuration, let text)):  // the parser gives only full-text operators these
                test = try fullTextMatch(
                    target, column: column.name, of: table, op: op, configuration: configuration, query: text)
            case (.like, .text(let pattern)), (.ilike, .text(let pattern)):
                test = PGQuery(unsafeSQL: "\(target)::text \(op == .like ? "LIKE" : "ILIKE") ") + "\(pattern)"
            case (.match, .text(let pattern)), (.imatch, .text(let pattern)):
                test = PGQuery(unsafeSQL: "\(target)::text \(op == .match ? "~" : "~*") ") + "\(pattern)"
            case (.isdistinct, .text(let text)):
                test = PGQuery(unsafeSQL: "\(target) IS DISTINCT FROM ") + bound(text, as: column.type)
            case (_, .text(let text)):
                let sqlOperator =
                    [RestQuery.Operator.eq: "=", .neq: "<>", .gt: ">", .gte: ">=", .lt: "<", .lte: "<="][op] ?? "="
                test = PGQuery(unsafeSQL: "\(target) \(sqlOperator) ") + bound(text, as: column.type)
            default:
                throw RestError.parse("\(op.rawValue) does not take this value")
            }
            return negated ? "NOT (\(test))" : test
        }
    }

    /// `to_tsvector('cfg', col) @@ <parser>('cfg', $n)`, written exactly as the indexes of migration 0006 are.
    private func fullTextMatch(
        _ target: String, column: String, of table: RestSchema.Table, op: RestQuery.Operator, configuration: String?,
        query: String
    ) throws -> PGQuery {
        guard RestSchema.fullTextColumns[table.name]?.contains(column) == true else {
            throw RestError(
                status: 400, code: "PGRST100",
                message: "failed to parse the request: full-text search applies to quotes.text and quotes.author only")
        }
        let configuration = configuration ?? RestSchema.defaultFullTextConfiguration
        guard RestSchema.fullTextConfigurations.contains(configuration) else {
            throw RestError(
                status: 400, code: "PGRST100",
                message: "failed to parse the request: the text search configuration must be english or simple")
        }
        let parser =
            [RestQuery.Operator.fts: "to_tsquery", .plfts: "plainto_tsquery", .phfts: "phraseto_tsquery"][op]
            ?? "websearch_to_tsquery"
        let regconfig = "'\(configuration)'::regconfig"
        let vector = "to_tsvector(\(regconfig), \(target))"
        return "\(unsafeSQL: vector) @@ \(unsafeSQL: parser)(\(unsafeSQL: regconfig), \(query))"
    }

    /// `$n::type`: PostgreSQL parses the client's text as the column's type (bad input fails as 22P02).
    func bound(_ text: String, as type: String) -> PGQuery {
        "\(text)::\(unsafeSQL: type)"
    }

    /// ` WHERE <filters> AND <inner embeds> AND <row rule>`.
    func whereClause(_ query: RestQuery, of table: RestSchema.Table, alias: String) throws -> PGQuery {
        var predicates = try query.conditions.map { try condition($0, of: table, alias: alias) }
        predicates += try innerJoins(query.select, of: table, alias: alias)
        predicates.append(rule(table, alias: alias))
        return " WHERE \(predicates.joined(separator: " AND "))"
    }

    func orderClause(_ query: RestQuery, of table: RestSchema.Table, alias: String) throws -> PGQuery {
        guard !query.order.isEmpty else { return "" }
        let terms = try query.order.map { term -> String in
            let column = try column(term.column, of: table)
            var text = "\(alias).\(quoted(column.name)) \(term.descending ? "DESC" : "ASC")"
            if let nulls = term.nulls { text += nulls == .first ? " NULLS FIRST" : " NULLS LAST" }
            return text
        }
        return PGQuery(unsafeSQL: " ORDER BY " + terms.joined(separator: ", "))
    }

    // MARK: statements

    /// One round trip: the page as a JSON array and its row count.
    func read(_ query: RestQuery, from table: RestSchema.Table) throws -> PGQuery {
        let columns = try projection(query.select, of: table, alias: "t0", depth: 0)
        let filter = try whereClause(query, of: table, alias: "t0") + orderClause(query, of: table, alias: "t0")
        let rows: PGQuery = "SELECT \(columns) FROM \(unsafeSQL: quoted(table.name)) t0\(filter)\(page(query))"
        return "SELECT coalesce(json_agg(r), '[]'::json)::text AS body, count(*)::int8 AS rows FROM (\(rows)) r"
    }

    /// A row for each row the filters and the row rule let through (counted for `Prefer: count=…`).
    func matching(_ query: RestQuery, from table: RestSchema.Table) throws -> PGQuery {
        let filter = try whereClause(query, of: table, alias: "t0")
        return "SELECT 1 FROM \(unsafeSQL: quoted(table.name)) t0\(filter)"
    }

    /// HEAD: how many rows the page would hold, counted without building them.
    func pageCount(_ query: RestQuery, from table: RestSchema.Table) throws -> PGQuery {
        _ = try projection(query.select, of: table, alias: "t0", depth: 0)  // the select is checked as for GET
        let filter = try whereClause(query, of: table, alias: "t0")
        let rows: PGQuery = "SELECT 1 FROM \(unsafeSQL: quoted(table.name)) t0\(filter)\(page(query))"
        return "SELECT ''::text AS body, count(*)::int8 AS rows FROM (\(rows)) r"
    }

    /// ` LIMIT $n OFFSET $m`: at most `RestQuery.maximumRows`.
    private func page(_ query: RestQuery) -> PGQuery {
        " LIMIT \(min(query.limit ?? RestQuery.maximumRows, RestQuery.maximumRows)) OFFSET \(query.offset ?? 0)"
    }

    /// Wraps a data-changing statement (a CTE named `changed` returning whole rows) so that it answers the
    /// changed rows as JSON in the client's select shape, with their count and how many were inserted.
    func changed(_ statement: PGQuery, select: [RestQuery.SelectItem], table: RestSchema.Table) throws -> PGQuery {
        let columns = try projection(select, of: table, alias: "t0", depth: 0)
        let inserted = "(SELECT count(*) FROM changed WHERE qv_inserted)::int8 AS inserted"
        return "WITH changed AS (\(statement)) SELECT coalesce(json_agg(r), '[]'::json)::text AS body, "
            + "count(*)::int8 AS rows, \(unsafeSQL: inserted) FROM (SELECT \(columns) FROM changed t0) r"
    }
}
