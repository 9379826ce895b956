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
                <form class="inline" method="get" action="/console/audit">
                <label>Owner <input type="search" name="owner" value="\(owner)" maxlength="254"></label>
                <label>Action <select name="action">\(choices)</select></label>
                <label>Text <input type="search" name="q" value="\(text)" maxlength="200"></label>
                <button type="submit">Search</button>
                <a class="button secondary" href="\(Pager.url("/console/audit.csv", filters))">Export CSV</a></form>
                <table class="cards audit"><thead><tr><th>When</th><th>Owner</th><th>Action</th><th>Target</th><th>Before</th>
                <th>After</th><th>Client</th></tr></thead><tbody>\(found.entries.map(row))</tbody></table>
                \(Pager.links("/console/audit", filters: filters, page: page, hasMore: found.hasMore))
                """)
    }

    /// The filtered rows as CSV, newest first, up to `AuditLog.exportLimit`.
    static func export(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let (owner, action, text) = filters(request)
        let entries = try await request.context.audit.export(owner: owner, action: action, text: text)
        let rows = entries.map { entry in
            [
                ISO8601DateFormatter().string(from: entry.at), entry.ownerEmail, entry.action, entry.target,
                entry.before ?? "", entry.after ?? "", entry.clientAddress ?? "", entry.userAgent ?? "",
            ]
        }
        return .file(
            contentType: "text/csv; charset=utf-8",
            bytes: CSVWriter.document(
                header: ["at", "owner", "action", "target", "before", "after", "client_address", "user_agent"],
                rows: rows),
            download: "quotevault-audit.csv")
    }

    private static func filters(_ request: ConsoleRequest) -> (owner: String, action: String, text: String) {
        (request.query("owner") ?? "", request.query("action") ?? "", request.query("q") ?? "")
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
            <td data-label="After"><code>\(entry.after ?? "")</code></td><td data-label="Client">\(client)</td></tr>
            """
    }
}
