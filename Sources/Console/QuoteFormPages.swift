import Foundation
import QuoteVault

/// Adding and editing a quote: one form, checked by the import's rules (text and author 1…300 and 1…200
/// characters, one of the five categories); a refusal shows the form again with the message, saving nothing.
enum QuoteFormPages {
    static func new(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        form(request, title: "Add a quote", action: "/console/quotes", values: QuoteRecord(line: 1), message: nil)
    }

    static func create(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let record = submitted(request)
        do {
            let quote = try await request.context.editor.add(record, by: request.owner.actor)
            return .redirect("/console/quotes/\(quote.id.uuidString.lowercased())/edit?done=added")
        } catch Failure.validation(let errors) {
            return form(request, title: "Add a quote", action: "/console/quotes", values: record, message: errors)
        }
    }

    static func edit(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let quote = try await request.context.quotes.quote(id: id)
        let values = QuoteRecord(line: 1, text: quote.text, author: quote.author, category: quote.category)
        return form(request, title: "Edit a quote", action: action(id), values: values, message: nil)
    }

    static func update(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let record = submitted(request)
        do {
            _ = try await request.context.editor.edit(id, record, by: request.owner.actor)
            return .redirect("/console/quotes/\(id.uuidString.lowercased())/edit?done=saved")
        } catch Failure.validation(let errors) {
            return form(request, title: "Edit a quote", action: action(id), values: record, message: errors)
        }
    }

    private static func action(_ id: UUID) -> String { "/console/quotes/\(id.uuidString.lowercased())" }

    private static func submitted(_ request: ConsoleRequest) -> QuoteRecord {
        QuoteRecord(
            line: 1, text: request.form["text"], author: request.form["author"],
            category: request.form["category"])
    }

    private static func form(
        _ request: ConsoleRequest, title: String, action: String, values: QuoteRecord, message errors: [FieldError]?
    ) -> ConsoleAnswer {
        let notice: HTML =
            switch request.query("done") {
            case "added": "<p class=\"notice\">The quote was added.</p>"
            case "saved": "<p class=\"notice\">Saved.</p>"
            default: .empty
            }
        let problems: HTML =
            errors.map { errors in
                // The import's reasons name their field first ("text is missing or empty").
                let lines = errors.map { error -> HTML in
                    "<p>\(error.message.prefix(1).uppercased() + error.message.dropFirst()).</p>"
                }
                return "<div class=\"error\" role=\"alert\"><p>Nothing was saved.</p>\(lines)</div>"
            } ?? .empty
        return .page(
            title: title,
            body: """
                \(notice)\(problems)
                <form class="stack" method="post" action="\(action)">\(request.csrfField)
                <label>Text <textarea name="text" maxlength="2000" required>\(values.text ?? "")</textarea></label>
                <label>Author <input name="author" value="\(values.author ?? "")" maxlength="500" required></label>
                <label>Category \(QuoteListPage.categorySelect(values.category ?? "", allowAll: false))</label>
                <button type="submit">Save</button></form>
                <p><a href="/console/quotes">Back to the quotes</a></p>
                """, status: errors == nil ? 200 : 422)
    }
}
