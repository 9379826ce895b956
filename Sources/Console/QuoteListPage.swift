import Foundation
import QuoteVault

/// The quotes: newest first or sorted by any column or by favorites, a page at a time, searched (text or author) and
/// filtered by category, with how many users favorited each; a page past the last is sent to the last. Rows can be
/// selected for a bulk deletion, and the filter exported.
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
        let searching = !q.trimmingCharacters(in: .whitespaces).isEmpty
        // A search is ranked by relevance; the columns sort the list.
        let order = searching ? nil : QuoteListOrder.of(request)
        let page = PageRequest(page: pageNumber, size: pageSize)
        var rows: [QuoteListing.Row]
        var total: Int, exact = true
        if let order {
            (rows, total) = try await request.context.listing.page(
                category: category, order: order, page: pageNumber, size: pageSize)
        } else {
            var quotes: Page<Quote>
            if searching {
                do {
                    quotes = try await request.context.search.search(
                        try SearchQuery(q), in: field, category: category, page: page)
                } catch Failure.validation(let errors) {
                    messages += errors.map { "<p class=\"error\">The search \($0.message).</p>" }
                    quotes = try await request.context.quotes.list(category: category, page: page)
                }
            } else {
                quotes = try await request.context.quotes.list(category: category, page: page)
            }
            let favorites = try await request.context.favoriteCounts.of(quotes.items.map(\.id))
            rows = quotes.items.map { QuoteListing.Row(quote: $0, favorites: favorites[$0.id] ?? 0) }
            total = quotes.total
            exact = quotes.totalIsExact != false
        }
        let filters: [(String, String?)] =
            [
                ("q", q), ("in", field.rawValue == "author" ? "author" : nil), ("category", category?.rawValue),
            ] + QuoteListOrder.query(order)
        let lastPage: Int? = exact ? max(1, (total + pageSize - 1) / pageSize) : nil
        if let lastPage, pageNumber > lastPage {
            return .redirect(Pager.url("/console/quotes", filters + [("page", lastPage > 1 ? String(lastPage) : nil)]))
        }
        let hasMore = lastPage.map { pageNumber < $0 } ?? (rows.count == pageSize)
        let totalText: HTML = exact ? "\(total)" : "more than \(total)"
        return .page(
            title: "Quotes",
            body: """
                \(QuoteListNotice.of(request))\(messages)
                <form class="inline" method="get" action="/console/quotes">
                <label>Search <input type="search" name="q" value="\(q)" maxlength="200"></label>
                <label>In <select name="in">\(option("keyword", "text", field.rawValue))\(
                option("author", "author", field.rawValue))</select></label>
                <label>Category \(categorySelect(category?.rawValue ?? "", allowAll: true))</label>\(
                QuoteListOrder.hiddenFields(order))
                <button type="submit">Show</button>
                <a class="button secondary" href="/console/quotes/new">Add a quote</a></form>
                <p class="muted">\(totalText) quotes.</p>
                \(QuoteExport.links(category: category, order: order, searching: searching, total: total))
                <form method="post" action="/console/quotes/bulk-delete">\(request.csrfField)
                <table class="cards"><thead><tr><th><span class="visually-hidden">Select</span></th>\(
                QuoteListOrder.headers(filters: filters, order: order, sortable: !searching))<th></th></tr></thead>
                <tbody>\(rows.map(row))</tbody></table>
                <p><button class="danger" type="submit">Delete the selected quotes…</button></p></form>
                \(Pager.links("/console/quotes", filters: filters, page: pageNumber, hasMore: hasMore, last: lastPage))
                """)
    }

    private static func row(_ row: QuoteListing.Row) -> HTML {
        let quote = row.quote
        let id = quote.id.uuidString.lowercased()
        return """
            <tr><td class="select"><input type="checkbox" name="id" value="\(id)" aria-label="Select"></td>
            <td>\(quote.text)</td><td data-label="Author">\(quote.author)</td>
            <td data-label="Category">\(quote.category)</td>
            <td data-label="Added" class="nowrap">\(ConsoleFormat.dateHTML(quote.createdAt))</td>
            <td data-label="Favorites">\(row.favorites)</td>
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
