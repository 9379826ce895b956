import HTTPServer

/// Which `/rest/v1` requests are expensive, read off the parsed query (the filter tree, the order), never off its
/// text: a pattern filter (`like`, `ilike`, `match`, `imatch`, full-text, negated or inside groups at any depth)
/// is matched against every row it reaches, an order no index serves sorts a public table whole, and an array
/// body is a bulk write. A request that does not parse is cheap: it is refused before any SQL.
enum RestCost {
    @Sendable static func hasExpensiveShape(_ request: Request) -> Bool {
        guard let table = RestSchema.tables[request.pathParameter("table")],
            let query = try? RestQuery.parse(request.query)
        else { return false }
        return query.isExpensive(on: table)
    }

    /// An expensive shape, or a JSON array body (many rows written at once).
    @Sendable static func isBulkOrExpensive(_ request: Request) -> Bool {
        if hasExpensiveShape(request) { return true }
        return request.body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[")
    }
}

extension RestQuery {
    static let patternOperators: Set<Operator> = [.like, .ilike, .match, .imatch, .fts, .plfts, .phfts, .wfts]

    func isExpensive(on table: RestSchema.Table) -> Bool {
        Self.hasPattern(conditions) || !isOrderedByIndex(on: table)
    }

    static func hasPattern(_ conditions: [Condition]) -> Bool {
        conditions.contains { condition in
            switch condition {
            case .compare(_, let op, _, _): return patternOperators.contains(op)
            case .all(let members, _), .any(let members, _): return hasPattern(members)
            }
        }
    }

    /// Ordered as an index of the table is (or unordered); a table of owned rows holds one account's rows, so
    /// any order of them is cheap.
    func isOrderedByIndex(on table: RestSchema.Table) -> Bool {
        guard table.owner == nil, let first = order.first else { return true }
        return table.orderedByIndex.contains(first.column)
    }
}
