import QuoteVault

/// Deleting a quote: a confirmation page showing it, then the post that deletes it.
enum QuoteDeletePages {
    static func confirm(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let quote = try await request.context.quotes.quote(id: try request.pathUUID("id"))
        return .page(
            title: "Delete this quote?",
            body: """
                <blockquote><p>\(quote.text)</p><p>— \(quote.author) (\(quote.category))</p></blockquote>
                <p>It disappears from the app and from every user's favorites and collections.</p>
                <form class="inline" method="post"
                action="/console/quotes/\(quote.id.uuidString.lowercased())/delete">\(
                request.csrfField)<button class="danger" type="submit">Delete</button>
                <a class="button secondary" href="/console/quotes">Keep it</a></form>
                """)
    }

    static func delete(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        try await request.context.editor.delete(try request.pathUUID("id"), by: request.owner.actor)
        return .redirect("/console/quotes?done=deleted")
    }
}
