import Foundation
import QuoteVault

/// The quotes: newest first, a page at a time, searched (text or author) and filtered by category, with how many
/// users favorited each; a page past the last is sent to the last.
enum QuoteListPage {
    static let pageSize = 25

    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let q = request.query("q") ?? "", field = request.query("in") == "author" ? SearchField.author : .keyword
        let pageNumber = Pager.page(request)
        var messages: [HTML] = []
        var category: QuoteCategory?
        if let name = request.query("category"), !name.isEmpty {
            category = QuoteCategory(rawValue: name)
            if category == nil {
                messages.append("<p class=\"error\">Unknown category “\(name)”: showing all.</p>")
            }
        }
        let page = PageRequest(page: pageNumber, size: pageSize)
        var quotes: Page<Quote>
        if q.trimmingCharacters(in: .whitespaces).isEmpty {
            quotes = try await request.context.quotes.list(category: category, page: page)
        } else {
            do {
                quotes = try await request.context.search.search(
                    try SearchQuery(q), in: field, category: category,
                    page: page)
            } catch Failure.validation(let errors) {
                messages += errors.map { "<p class=\"error\">The search \($0.message).</p>" }
                quotes = try await request.context.quotes.list(category: category, page: page)
            }
        }
        let notice: HTML =
            switch request.query("done") {
            case "deleted": "<p class=\"notice\">The quote was deleted.</p>"
            default: .empty
            }
        let filters: [(String, String?)] = [
            ("q", q), ("in", field.rawValue == "author" ? "author" : nil),
            ("category", category?.rawValue),
        ]
        let total: HTML = quotes.totalIsExact == false ? "more than \(quotes.total)" : "\(quotes.total)"
        let lastPage: Int? = quotes.totalIsExact == false ? nil : max(1, (quotes.total + pageSize - 1) / pageSize)
        if let lastPage, pageNumber > lastPage {
            return .redirect(Pager.url("/console/quotes", filters + [("page", lastPage > 1 ? String(lastPage) : nil)]))
        }
        let favorites = try await request.context.favoriteCounts.of(quotes.items.map(\.id))
        return .page(
            title: "Quotes",
            body: """
                \(notice)\(messages)
                <form class="inline" method="get" action="/console/quotes">
                <label>Search <input type="search" name="q" value="\(q)" maxlength="200"></label>
                <label>In <select name="in">\(option("keyword", "text", field.rawValue))\(
                option("author", "author", field.rawValue))</select></label>
                <label>Category \(categorySelect(category?.rawValue ?? "", allowAll: true))</label>
                <button type="submit">Show</button>
                <a class="button secondary" href="/console/quotes/new">Add a quote</a></form>
                <p class="muted">\(total) quotes.</p>
                <table class="cards"><thead><tr><th>Text</th><th>Author</th><th>Category</th><th>Added</th>
                <th>Favorites</th><th></th></tr></thead><tbody>\(
                quotes.items.map { row($0, favorites: favorites[$0.id] ?? 0) })</tbody></table>
                \(Pager.links(
                "/console/quotes", filters: filters, page: pageNumber, hasMore: quotes.hasMore, last: lastPage))
                """)
    }

    private static func row(_ quote: Quote, favorites: Int) -> HTML {
        let id = quote.id.uuidString.lowercased()
        return """
            <tr><td>\(quote.text)</td><td data-label="Author">\(quote.author)</td>
            <td data-label="Category">\(quote.category)</td>
            <td data-label="Added">\(ConsoleFormat.date(quote.createdAt))</td>
            <td data-label="Favorites">\(favorites)</td>
            <td class="actions"><a href="/console/quotes/\(id)/edit">Edit</a> ·
            <a href="/console/quotes/\(id)/delete">Delete</a></td></tr>
            """
    }

    /// A `<select name="category">` with the five categories (and "all" for a filter).
    static func categorySelect(_ selected: String, allowAll: Bool) -> HTML {
        let all: HTML = allowAll ? option("", "all", selected) : .empty
        let categories = QuoteCategory.allCases.map { option($0.rawValue, $0.rawValue, selected) }
        return "<select name=\"category\">\(all)\(categories)</select>"
    }

    static func option(_ value: String, _ label: String, _ selected: String) -> HTML {
        "<option value=\"\(value)\"\(HTML(rendered: value == selected ? " selected" : ""))>\(label)</option>"
    }
}
