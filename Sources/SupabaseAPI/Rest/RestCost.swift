import HTTPServer

/// Which `/rest/v1` requests are expensive: pattern filters (`like`, `ilike`, `match`, full-text) scan rows
/// whatever the indexes, and an array body is a bulk write.
enum RestCost {
    private static let patternOperators = ["like", "ilike", "match", "imatch", "fts", "plfts", "phfts", "wfts"]

    /// A filter with a pattern operator anywhere: `col=ilike.*x*`, `col=not.like.x`, inside `or=(…)`/`and=(…)`.
    @Sendable static func hasPatternFilter(_ request: Request) -> Bool {
        request.query.contains { field in
            let value = field.value.lowercased()
            return patternOperators.contains { value.hasPrefix($0 + ".") || value.contains("." + $0 + ".") }
        }
    }

    /// A pattern filter, or a JSON array body (many rows written at once).
    @Sendable static func isBulkOrPatterned(_ request: Request) -> Bool {
        if hasPatternFilter(request) { return true }
        return request.body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[")
    }
}
