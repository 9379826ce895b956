import Foundation

/// "Newer/older" links of a paged list, keeping the list's filters in the query string.
enum Pager {
    static func links(_ path: String, filters: [(String, String?)], page: Int, hasMore: Bool) -> HTML {
        var links: [HTML] = []
        if page > 1 {
            links.append("<a href=\"\(url(path, filters + [("page", String(page - 1))]))\">← Previous</a>")
        }
        links.append("<span class=\"muted\">Page \(page)</span>")
        if hasMore { links.append("<a href=\"\(url(path, filters + [("page", String(page + 1))]))\">Next →</a>") }
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

    /// `page` of the query: a whole number from 1, else 1.
    static func page(_ request: ConsoleRequest) -> Int {
        guard let text = request.query("page"), let page = Int(text), page >= 1, page <= 100_000 else { return 1 }
        return page
    }
}
