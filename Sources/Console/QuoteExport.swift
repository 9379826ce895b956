import Foundation
import HTTPServer
import QuoteVault

/// The quote list's filter (category and order) downloaded as CSV or JSON, at most `QuoteListing.exportLimit` rows
/// (the first in the chosen order; the list page says when the filter holds more). CSV cells a spreadsheet would run
/// as formulas are defused (`CSVWriter`).
enum QuoteExport {
    static let header = ["id", "text", "author", "category", "created_at", "favorites"]

    static func links(category: QuoteCategory?, order: QuoteListing.Order?, searching: Bool, total: Int) -> HTML {
        guard !searching else {
            return "<p class=\"muted\">Exports take the category and the order; clear the search to export.</p>"
        }
        let query: [(String, String?)] = [("category", category?.rawValue)] + QuoteListOrder.query(order)
        let capped: HTML =
            total > QuoteListing.exportLimit
            ? " (the first \(QuoteListing.exportLimit) of \(total) in this order)" : .empty
        return """
            <p class="muted">Export this list\(capped): <a href="\(Pager.url("/console/quotes/export.csv", query))"
            download>CSV</a> · <a href="\(Pager.url("/console/quotes/export.json", query))" download>JSON</a></p>
            """
    }

    static func csv(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let rows = try await export(request)
        let cells = rows.map { row in
            [
                row.quote.id.uuidString.lowercased(), row.quote.text, row.quote.author, row.quote.category,
                ConsoleFormat.timestamp(row.quote.createdAt), String(row.favorites),
            ]
        }
        return .file(
            contentType: "text/csv; charset=utf-8", bytes: CSVWriter.document(header: header, rows: cells),
            download: "quotevault-quotes.csv")
    }

    static func json(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let rows = try await export(request)
        var writer = JSONWriter(capacity: rows.count * 256 + 2)
        writer.array(rows) { writer, row in
            writer.raw("{")
            writer.key("id"); writer.uuid(row.quote.id); writer.comma()
            writer.key("text"); writer.string(row.quote.text); writer.comma()
            writer.key("author"); writer.string(row.quote.author); writer.comma()
            writer.key("category"); writer.string(row.quote.category); writer.comma()
            writer.key("created_at"); writer.timestamp(row.quote.createdAt); writer.comma()
            writer.key("favorites"); writer.int(row.favorites)
            writer.raw("}")
        }
        return .file(
            contentType: "application/json", bytes: writer.bytes, download: "quotevault-quotes.json")
    }

    private static func export(_ request: ConsoleRequest) async throws -> [QuoteListing.Row] {
        let category = request.query("category").flatMap(QuoteCategory.init(rawValue:))
        return try await request.context.listing.export(
            category: category, order: QuoteListOrder.of(request) ?? .newest)
    }
}
