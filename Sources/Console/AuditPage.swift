import Foundation
import QuoteVault

/// The audit log: every owner action, failed sign-in and service role write, newest first, searchable by owner,
/// action and any text in the row (the client address and user agent too), and exported as CSV as filtered.
enum AuditPage {
    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let (owner, action, text) = filters(request)
        let page = Pager.page(request)
        let log = request.context.audit
        let found = try await log.search(owner: owner, action: action, text: text, page: page)
        let actions = try await log.actions()
        let choices = [QuoteListPage.option("", "any", action)] + actions.map { QuoteListPage.option($0, $0, action) }
        let filters: [(String, String?)] = [("owner", owner), ("action", action), ("q", text)]
        return .page(
            title: "Audit log",
            body: """
                \(notice(request))<form class="inline" method="get" action="/console/audit">
                <label>Owner <input type="search" name="owner" value="\(owner)" maxlength="254"></label>
                <label>Action <select name="action">\(choices)</select></label>
                <label>Text <input type="search" name="q" value="\(text)" maxlength="200"></label>
                <button type="submit">Search</button>
                <a class="button secondary" href="\(Pager.url("/console/audit.csv", filters))">Export CSV</a></form>
                <table class="cards audit"><thead><tr><th>When</th><th>Owner</th><th>Action</th><th>Target</th><th>Before</th>
                <th>After</th><th>Client</th><th>Row</th></tr></thead><tbody>\(found.entries.map(row))</tbody></table>
                \(Pager.links("/console/audit", filters: filters, page: page, hasMore: found.hasMore))
                """)
    }

    /// Rows read from the database per page of an export.
    static let exportPageSize = 1000

    /// The filtered rows as CSV, newest first, every one, streamed as they are read a page at a time.
    static func export(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let (owner, action, text) = filters(request)
        let log = request.context.audit
        return .download(contentType: "text/csv; charset=utf-8", filename: "quotevault-audit.csv") { out in
            let header = ["at", "owner", "action", "target", "before", "after", "client_address", "user_agent"]
            guard await out.write(CSVWriter.document(header: header, rows: [])) else { return }
            var cursor: AuditLog.Cursor?
            repeat {
                let page = try await log.export(
                    owner: owner, action: action, text: text, after: cursor, limit: exportPageSize)
                let rows = page.entries.map { entry in
                    [
                        ISO8601DateFormatter().string(from: entry.at), entry.ownerEmail, entry.action, entry.target,
                        entry.before ?? "", entry.after ?? "", entry.clientAddress ?? "", entry.userAgent ?? "",
                    ]
                }
                guard await out.write(CSVWriter.document(header: nil, rows: rows)) else { return }
                cursor = page.next
            } while cursor != nil
        }
    }

    private static func filters(_ request: ConsoleRequest) -> (owner: String, action: String, text: String) {
        (request.query("owner") ?? "", request.query("action") ?? "", request.query("q") ?? "")
    }

    /// The confirmation after an undo: fixed text, and a link to the quote only when the query names a UUID.
    private static func notice(_ request: ConsoleRequest) -> HTML {
        guard request.query("done") == "undone" else { return .empty }
        let link: HTML =
            if let quote = request.query("quote").flatMap(UUID.init(uuidString:)) {
                " <a href=\"/console/quotes/\(quote.uuidString.lowercased())/edit\">See the quote</a>"
            } else { .empty }
        return "<p class=\"notice\" role=\"status\">The change was undone.\(link)</p>"
    }

    /// Its number (what an undo names), and an Undo button (to its confirmation page, `AuditUndoPages`) on a quote
    /// edit or deletion not yet undone.
    private static func undoCell(_ entry: AuditEntry) -> HTML {
        var cell: HTML = "#\(Int(entry.id))"
        if let undoes = entry.undoes { cell = "\(cell)<br><span class=\"muted\">undoes #\(Int(undoes))</span>" }
        if let undoneBy = entry.undoneBy {
            cell = "\(cell)<br><span class=\"muted\">undone by #\(Int(undoneBy))</span>"
        } else if entry.isUndoable {
            cell = """
                \(cell)<br><a class="button secondary" href="/console/audit/\(Int(entry.id))/undo">Undo</a>
                """
        }
        return cell
    }

    private static func row(_ entry: AuditEntry) -> HTML {
        let client: HTML =
            entry.clientAddress.map { address in
                "\(address)<br><span class=\"muted\">\(entry.userAgent ?? "")</span>"
            } ?? .empty
        return """
            <tr><td>\(ConsoleFormat.dateHTML(entry.at))</td><td data-label="Owner">\(entry.ownerEmail)</td>
            <td data-label="Action">\(entry.action)</td><td data-label="Target">\(entry.target)</td>
            <td data-label="Before"><code>\(entry.before ?? "")</code></td>
            <td data-label="After"><code>\(entry.after ?? "")</code></td><td data-label="Client">\(client)</td>
            <td data-label="Row">\(undoCell(entry))</td></tr>
            """
    }
}
