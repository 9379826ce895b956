import QuoteVault

/// The audit log: every owner action, newest first, searchable by owner, action and any text in the row.
enum AuditPage {
    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let owner = request.query("owner") ?? "", action = request.query("action") ?? ""
        let text = request.query("q") ?? "", page = Pager.page(request)
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
                <button type="submit">Search</button></form>
                <table class="cards"><thead><tr><th>When</th><th>Owner</th><th>Action</th><th>Target</th><th>Before</th>
                <th>After</th></tr></thead><tbody>\(found.entries.map(row))</tbody></table>
                \(Pager.links("/console/audit", filters: filters, page: page, hasMore: found.hasMore))
                """)
    }

    private static func row(_ entry: AuditEntry) -> HTML {
        """
        <tr><td>\(ConsoleFormat.date(entry.at))</td><td data-label="Owner">\(entry.ownerEmail)</td>
        <td data-label="Action">\(entry.action)</td><td data-label="Target">\(entry.target)</td>
        <td data-label="Before"><code>\(entry.before ?? "")</code></td>
        <td data-label="After"><code>\(entry.after ?? "")</code></td></tr>
        """
    }
}
