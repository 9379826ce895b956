import QuoteVault

/// Deleting a quote: a confirmation page showing it (and, up front, why it cannot go when a day holds it), then
/// the post that deletes it.
enum QuoteDeletePages {
    static func confirm(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        guard let editable = try await request.context.editor.editable(try request.pathUUID("id")) else {
            throw Failure.notFound
        }
        let quote = editable.quote
        let action: HTML =
            if let reason = editable.frozenReason {
                "<p class=\"error\" role=\"status\">\(reason)</p><p><a href=\"/console/quotes\">Back to the quotes</a></p>"
            } else {
                """
                <p>It disappears from the app and from every user's favorites and collections.</p>
                <form class="inline" method="post"
                action="/console/quotes/\(quote.id.uuidString.lowercased())/delete">\(
                request.csrfField)<button class="danger" type="submit">Delete</button>
                <a class="button secondary" href="/console/quotes">Keep it</a></form>
                """
            }
        return .page(
            title: "Delete this quote?",
            body: """
                <blockquote><p>\(quote.text)</p><p>— \(quote.author) (\(quote.category))</p></blockquote>
                \(action)
                """)
    }

    static func delete(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        try await request.context.editor.delete(try request.pathUUID("id"), by: request.actor)
        return .redirect("/console/quotes?done=deleted")
    }
}
