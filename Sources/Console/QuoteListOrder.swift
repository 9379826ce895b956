import QuoteVault

/// The quote list's order in the query string (`sort`, `dir`) and its sortable column headers.
enum QuoteListOrder {
    /// The columns in the list's order, with the sort each header applies.
    static let columns: [(title: String, sort: QuoteListing.Sort)] = [
        ("Text", .text), ("Author", .author), ("Category", .category), ("Added", .added), ("Favorites", .favorites),
    ]

    /// The order the query asks for; nil for the default (newest first), which the list serves on its own path.
    static func of(_ request: ConsoleRequest) -> QuoteListing.Order? {
        guard let sort = request.query("sort").flatMap(QuoteListing.Sort.init(rawValue:)) else { return nil }
        // Text-like columns read A to Z first; dates and counts the largest first.
        let descending = request.query("dir").map { $0 == "desc" } ?? [.added, .favorites].contains(sort)
        return QuoteListing.Order(sort, descending: descending)
    }

    static func query(_ order: QuoteListing.Order?) -> [(String, String?)] {
        guard let order else { return [] }
        return [("sort", order.sort.rawValue), ("dir", order.descending ? "desc" : "asc")]
    }

    /// The order kept when the filter form is submitted.
    static func hiddenFields(_ order: QuoteListing.Order?) -> HTML {
        let fields = query(order).map { name, value -> HTML in
            "<input type=\"hidden\" name=\"\(name)\" value=\"\(value ?? "")\">"
        }
        return "\(fields)"
    }

    /// `<th>`s: each a link sorting by its column (the other way round when it is the current one).
    static func headers(filters: [(String, String?)], order: QuoteListing.Order?, sortable: Bool) -> HTML {
        let current = order ?? .newest
        let kept = filters.filter { $0.0 != "sort" && $0.0 != "dir" }
        let cells = columns.map { column -> HTML in
            guard sortable else { return "<th>\(column.title)</th>" }
            let isCurrent = current.sort == column.sort
            let descending = isCurrent ? !current.descending : [.added, .favorites].contains(column.sort)
            let url = Pager.url(
                "/console/quotes", kept + [("sort", column.sort.rawValue), ("dir", descending ? "desc" : "asc")])
            let state = isCurrent ? (current.descending ? "descending" : "ascending") : "none"
            let arrow = isCurrent ? (current.descending ? " ↓" : " ↑") : ""
            return """
                <th aria-sort="\(state)"><a href="\(url)">\(column.title)\(arrow)</a></th>
                """
        }
        return "\(cells)"
    }
}
