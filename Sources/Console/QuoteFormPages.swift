import Foundation
import QuoteVault

/// Adding and editing a quote: one form, checked by the import's rules (`QuoteImporter`'s text and author lengths,
/// one of the five categories); a refusal shows the form again with the message, saving nothing. An edit carries
/// the version it was opened at: a save over another owner's newer save is refused and shows theirs.
enum QuoteFormPages {
    static func new(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        form(request, title: "Add a quote", action: "/console/quotes", values: QuoteRecord(line: 1), message: nil)
    }

    static func create(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let record = submitted(request)
        do {
            let quote = try await request.context.editor.add(record, by: request.actor)
            return .redirect("/console/quotes/\(quote.id.uuidString.lowercased())/edit?done=added")
        } catch Failure.validation(let errors) {
            return form(request, title: "Add a quote", action: "/console/quotes", values: record, message: errors)
        }
    }

    static func edit(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        guard let editable = try await request.context.editor.editable(id) else { throw Failure.notFound }
        let quote = editable.quote
        let values = QuoteRecord(line: 1, text: quote.text, author: quote.author, category: quote.category)
        return form(
            request, title: "Edit a quote", action: action(id), values: values, message: nil, editable: editable)
    }

    static func update(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let record = submitted(request)
        do {
            _ = try await request.context.editor.edit(
                id, record, version: request.form["version"] ?? "", by: request.actor)
            return .redirect("/console/quotes/\(id.uuidString.lowercased())/edit?done=saved")
        } catch Failure.validation(let errors) {
            let editable = try await request.context.editor.editable(id)
            return form(
                request, title: "Edit a quote", action: action(id), values: record, message: errors,
                editable: editable, version: request.form["version"])
        } catch let conflict as QuoteEditConflict {
            return form(
                request, title: "Edit a quote", action: action(id), values: record, message: nil,
                editable: conflict.current, otherSave: conflict.current.quote)
        }
    }

    private static func action(_ id: UUID) -> String { "/console/quotes/\(id.uuidString.lowercased())" }

    private static func submitted(_ request: ConsoleRequest) -> QuoteRecord {
        QuoteRecord(
            line: 1, text: request.form["text"], author: request.form["author"],
            category: request.form["category"])
    }

    /// - Parameters:
    ///   - editable: the stored quote of an edit: its version goes in the form (unless `version` keeps the one the
    ///     owner's refused save was made at), and its frozen reason is shown up front.
    ///   - otherSave: another owner's save that refused this one; shown above the owner's own values, and the form
    ///     now carries its version, so saving again replaces it knowingly.
    private static func form(
        _ request: ConsoleRequest, title: String, action: String, values: QuoteRecord, message errors: [FieldError]?,
        editable: EditableQuote? = nil, version: String? = nil, otherSave: Quote? = nil
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
        let conflict: HTML =
            otherSave.map { other in
                """
                <div class="error" role="alert"><p>Nothing was saved: another owner changed this quote after you
                opened it. Their version:</p>
                <blockquote><p>\(other.text)</p><p>— \(other.author) (\(other.category))</p></blockquote>
                <p>Your text is in the form below; save again to replace theirs with it.</p></div>
                """
            } ?? .empty
        let frozen: HTML = editable?.frozenReason.map { "<p class=\"error\" role=\"status\">\($0)</p>" } ?? .empty
        let versionField: HTML =
            (version ?? editable?.version).map { "<input type=\"hidden\" name=\"version\" value=\"\($0)\">" } ?? .empty
        let save: HTML =
            editable?.frozenReason == nil
            ? "<button type=\"submit\">Save</button>" : "<button type=\"submit\" disabled>Save</button>"
        let status = otherSave != nil ? 409 : errors == nil ? 200 : 422
        return .page(
            title: title,
            body: """
                \(notice)\(frozen)\(problems)\(conflict)
                <form class="stack" method="post" action="\(action)">\(request.csrfField)\(versionField)
                <label>Text <textarea name="text" maxlength="\(QuoteImporter.maximumTextLength)" required>\(
                values.text ?? "")</textarea></label>
                <label>Author <input name="author" value="\(values.author ?? "")" maxlength="\(
                QuoteImporter.maximumAuthorLength)" required></label>
                <label>Category \(QuoteListPage.categorySelect(values.category ?? "", allowAll: false))</label>
                \(save)</form>
                <p><a href="/console/quotes">Back to the quotes</a></p>
                """, status: status)
    }
}
