import Foundation
import QuoteVault

/// Deleting the quotes selected on the list: a confirmation page naming them, then each deleted on its own (a
/// quote that was or will be a quote of the day is refused with its reason, the others go).
enum QuoteBulkDeletePages {
    /// The most quotes one bulk deletion takes (a few pages' worth).
    static let limit = 100

    static func delete(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let ids = Array(Set(request.form.values("id").compactMap(UUID.init(uuidString:)))).sorted {
            $0.uuidString < $1.uuidString
        }
        guard !ids.isEmpty else {
            return .page(
                title: "Delete quotes",
                body: "<p class=\"error\">No quote was selected.</p><p><a href=\"/console/quotes\">Back</a></p>",
                status: 422)
        }
        guard ids.count <= limit else {
            throw Failure.badRequest(code: "invalid_form", detail: "Select at most \(limit) quotes at a time.")
        }
        guard request.form["confirm"] == "1" else { return try await confirm(request, ids) }
        var deleted = 0
        var refused: [HTML] = []
        for id in ids {
            do {
                try await request.context.editor.delete(id, by: request.actor)
                deleted += 1
            } catch Failure.conflict(let reason, _) {
                let text = try await request.context.editor.editable(id)?.quote.text ?? id.uuidString.lowercased()
                refused.append("<li>“\(text)”: \(reason)</li>")
            } catch Failure.notFound {
                refused.append("<li>\(id.uuidString.lowercased()): it no longer exists.</li>")
            }
        }
        let refusals: HTML = refused.isEmpty ? .empty : "<p class=\"error\">Not deleted:</p><ul>\(refused)</ul>"
        return .page(
            title: "Quotes deleted",
            body: """
                <p class="notice" role="status">Deleted \(deleted) of \(ids.count) quote(s).</p>\(refusals)
                <p><a href="/console/quotes">Back to the quotes</a></p>
                """)
    }

    private static func confirm(_ request: ConsoleRequest, _ ids: [UUID]) async throws -> ConsoleAnswer {
        var items: [HTML] = []
        for id in ids {
            guard let editable = try await request.context.editor.editable(id) else { continue }
            let reason: HTML = editable.frozenReason.map { " <span class=\"error\">(kept: \($0))</span>" } ?? .empty
            items.append(
                """
                <li>“\(editable.quote.text)” — \(editable.quote.author)\(reason)<input type="hidden" name="id"
                value="\(id.uuidString.lowercased())"></li>
                """)
        }
        return .page(
            title: "Delete \(items.count) quote(s)?",
            body: """
                <form method="post" action="/console/quotes/bulk-delete">\(request.csrfField)
                <input type="hidden" name="confirm" value="1"><ul>\(items)</ul>
                <p>They disappear from the app and from every user's favorites and collections.</p>
                <button class="danger" type="submit">Delete them</button>
                <a class="button secondary" href="/console/quotes">Keep them</a></form>
                """)
    }
}
