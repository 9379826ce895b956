import Foundation

/// "Newer/older" links of a paged list, keeping the list's filters in the query string; with the page count when
/// the list knows it, first and last pages too.
enum Pager {
    /// The largest page number taken; a larger one is that page (past any list's end, so shown as such).
    static let maximumPage = 10_000_000

    static func links(_ path: String, filters: [(String, String?)], page: Int, hasMore: Bool, last: Int? = nil)
        -> HTML
    {
        func link(_ number: Int, _ label: String) -> HTML {
            "<a href=\"\(url(path, filters + [("page", String(number))]))\">\(label)</a>"
        }
        var links: [HTML] = []
        if page > 2, last != nil { links.append(link(1, "« First")) }
        if page > 1 { links.append(link(page - 1, "← Previous")) }
        let of: HTML = last.map { " of \($0)" } ?? .empty
        links.append("<span class=\"muted\">Page \(page)\(of)</span>")
        if hasMore { links.append(link(page + 1, "Next →")) }
        if let last, last > page + 1 { links.append(link(last, "Last »")) }
        return "<nav class=\"pager\">\(links)</nav>"
    }

    /// `path?name=value&…` with every value percent-encoded; empty and nil values left out.
    static func url(_ path: String, _ query: [(String, String?)]) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<"\u{80}"))
        allowed.insert(charactersIn: "-._~")
        let items = query.compactMap { name, value -> String? in
            guard let value, !value.isEmpty else { return nil }
            return name + "=" + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }
        return items.isEmpty ? path : path + "?" + items.joined(separator: "&")
    }

    /// `page` of the query: a whole number from 1 (at most `maximumPage`), else 1.
    static func page(_ request: ConsoleRequest) -> Int {
        guard let text = request.query("page"), let page = Int(text), page >= 1 else { return 1 }
        return min(page, maximumPage)
    }
}
