import Foundation
import HTTPServer
import QuoteVault

/// The quote list's filter (category and order) downloaded as CSV or JSON, every row of it, streamed as it is read
/// a page at a time (`DownloadStream`). CSV cells a spreadsheet would run as formulas are defused (`CSVWriter`).
enum QuoteExport {
    static let header = ["id", "text", "author", "category", "created_at", "favorites"]

    static func links(category: QuoteCategory?, order: QuoteListing.Order?, searching: Bool, total: Int) -> HTML {
        guard !searching else {
            return "<p class=\"muted\">Exports take the category and the order; clear the search to export.</p>"
        }
        let query: [(String, String?)] = [("category", category?.rawValue)] + QuoteListOrder.query(order)
        return """
            <p class="muted">Export this list (\(total) quotes): <a href="\(Pager.url("/console/quotes/export.csv", query))"
            download>CSV</a> · <a href="\(Pager.url("/console/quotes/export.json", query))" download>JSON</a></p>
            """
    }

    /// Rows read from the database per page of an export.
    static let pageSize = 1000

    static func csv(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        .download(contentType: "text/csv; charset=utf-8", filename: "quotevault-quotes.csv") { out in
            guard await out.write(CSVWriter.document(header: header, rows: [])) else { return }
            try await pages(request, into: out) { rows in
                CSVWriter.document(
                    header: nil,
                    rows: rows.map { row in
                        [
                            row.quote.id.uuidString.lowercased(), row.quote.text, row.quote.author,
                            row.quote.category, ConsoleFormat.timestamp(row.quote.createdAt), String(row.favorites),
                        ]
                    })
            }
        }
    }

    /// One JSON array, written an object at a time.
    static func json(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        .download(contentType: "application/json", filename: "quotevault-quotes.json") { out in
            var first = true
            guard await out.write(Array("[".utf8)) else { return }
            let finished = try await pages(request, into: out) { rows in
                var writer = JSONWriter(capacity: rows.count * 256)
                for row in rows {
                    if !first { writer.comma() }
                    first = false
                    object(row, &writer)
                }
                return writer.bytes
            }
            if finished { _ = await out.write(Array("]".utf8)) }
        }
    }

    private static func object(_ row: QuoteListing.Row, _ writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("id"); writer.uuid(row.quote.id); writer.comma()
        writer.key("text"); writer.string(row.quote.text); writer.comma()
        writer.key("author"); writer.string(row.quote.author); writer.comma()
        writer.key("category"); writer.string(row.quote.category); writer.comma()
        writer.key("created_at"); writer.timestamp(row.quote.createdAt); writer.comma()
        writer.key("favorites"); writer.int(row.favorites)
        writer.raw("}")
    }

    /// Reads the request's filter in order, a page at a time, writing each page's `encode`d rows to `out`.
    /// - Returns: false when the client went away before the end.
    @discardableResult
    private static func pages(
        _ request: ConsoleRequest, into out: DownloadStream, _ encode: ([QuoteListing.Row]) -> [UInt8]
    ) async throws -> Bool {
        let category = request.query("category").flatMap(QuoteCategory.init(rawValue:))
        let order = QuoteListOrder.of(request) ?? .newest
        var cursor: QuoteListing.Cursor?
        repeat {
            let page = try await request.context.listing.export(
                category: category, order: order, after: cursor, limit: pageSize)
            guard await out.write(encode(page.rows)) else { return false }
            cursor = page.next
        } while cursor != nil
        return true
    }
}
