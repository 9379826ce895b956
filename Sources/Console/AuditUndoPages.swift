import Foundation
import QuoteVault

/// Undo from the audit log (`QuoteUndo`): the Undo button leads to a page showing what will change (each field now
/// and after, or the deleted quote coming back), and only that page's post acts. A refusal, on either, is a page
/// saying why, and nothing changes.
enum AuditUndoPages {
    static func confirm(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let preview = try await request.context.undo.preview(try entryID(request))
        let change: HTML
        if let current = preview.current {
            let rows = [
                ("Text", current.text, preview.restored.text), ("Author", current.author, preview.restored.author),
                ("Category", current.category, preview.restored.category),
            ].map { field, now, after -> HTML in
                let mark: HTML = now == after ? "<span class=\"muted\">unchanged</span>" : "<strong>changes</strong>"
                return """
                    <tr><td>\(field)</td><td data-label="Now">\(now)</td><td data-label="After the undo">\(after)</td>
                    <td data-label="">\(mark)</td></tr>
                    """
            }
            change = """
                <p>The quote goes back to its values before this change:</p>
                <table class="cards"><thead><tr><th>Field</th><th>Now</th><th>After the undo</th><th></th></tr></thead>
                <tbody>\(rows)</tbody></table>
                """
        } else {
            change = """
                <p>The deleted quote comes back, under its id and in its place in the list:</p>
                <blockquote class="card"><p>\(preview.restored.text)</p><p>— \(preview.restored.author) (\(
                preview.restored.category))</p></blockquote>
                """
        }
        return .page(
            title: "Undo audit row #\(Int(preview.entryID))?",
            body: """
                <p class="muted">\(preview.action) of quote <code>\(preview.quoteID.uuidString.lowercased())</code></p>
                \(change)
                <form class="inline" method="post" action="/console/audit/\(Int(preview.entryID))/undo">\(
                request.csrfField)<button type="submit">Undo</button>
                <a class="button secondary" href="/console/audit">Keep it</a></form>
                """)
    }

    static func undo(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let quote = try await request.context.undo.undo(try entryID(request), by: request.actor)
        return .redirect("/console/audit?done=undone&quote=\(quote.uuidString.lowercased())")
    }

    private static func entryID(_ request: ConsoleRequest) throws -> Int64 {
        guard let id = Int64(request.http.pathParameter("id")) else { throw Failure.notFound }
        return id
    }
}
