import Foundation
import QuoteVault

/// Importing quotes from a CSV or JSON file: upload, a preview of every row with its verdict (nothing saved), then
/// on confirmation the good rows are saved in the background while the page shows the progress.
enum ImportPages {
    /// Rows shown per page of the preview.
    static let rowsPerPage = 200
    /// Uploads up to 8 MiB (about 50,000 quotes).
    static let uploadLimit = 8 << 20

    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        uploadForm(request, message: nil, status: 200)
    }

    static func upload(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        guard let file = request.form.files["file"], !file.bytes.isEmpty else {
            return uploadForm(request, message: "Choose a file to upload.", status: 422)
        }
        let records: [QuoteRecord]
        do {
            records = try QuoteFileReader.read(text: String(decoding: file.bytes, as: UTF8.self))
        } catch let error as QuoteFileReader.ReadError {
            return uploadForm(request, message: "The file cannot be read: \(error.description).", status: 422)
        }
        guard !records.isEmpty else { return uploadForm(request, message: "The file has no rows.", status: 422) }
        do {
            let id = try await request.context.imports.create(
                fileName: file.filename.isEmpty ? "upload" : file.filename, records: records, by: request.actor)
            return .redirect("/console/quotes/import/\(id.uuidString.lowercased())")
        } catch Failure.validation(let errors) {
            return uploadForm(request, message: "The file \(errors.map(\.message).joined()).", status: 422)
        }
    }

    static func draft(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let draft = try await request.context.imports.draft(id)
        let onlyErrors = request.query("only") == "errors"
        let page = Pager.page(request)
        switch draft.state {
        case .importing:
            let percent = draft.valid == 0 ? 100 : draft.processed * 100 / draft.valid
            let stalled: HTML =
                draft.isStalled
                ? """
                <p class="error">No progress for a minute: the server running it stopped.</p>
                <form method="post" action="/console/quotes/import/\(id.uuidString.lowercased())/resume">\(
                    request.csrfField)<button type="submit">Resume the import</button></form>
                """ : .empty
            return .page(
                title: "Importing \(draft.fileName)",
                body: """
                    \(stalled)<p>Saved \(draft.processed) of \(draft.valid) good rows (\(percent)%).</p>
                    <progress max="\(max(draft.valid, 1))" value="\(draft.processed)">\(percent)%</progress>
                    <p class="muted">This page refreshes itself every 2 seconds.</p>
                    """, refreshSeconds: 2)
        case .done, .failed:
            let outcome: HTML =
                draft.state == .done
                ? "<p class=\"notice\">Import finished.</p>"
                : "<p class=\"error\">The import stopped after \(draft.processed) rows; the rest were not saved.</p>"
            return .page(
                title: "Imported \(draft.fileName)",
                body: """
                    \(outcome)
                    <table><tbody><tr><th>Rows in the file</th><td>\(draft.total)</td></tr>
                    <tr><th>Added</th><td>\(draft.inserted)</td></tr>
                    <tr><th>Already there (same text and author)</th><td>\(draft.duplicates)</td></tr>
                    <tr><th>Refused</th><td>\(draft.rejected)</td></tr></tbody></table>
                    <p><a href="/console/quotes">See the quotes</a> ·
                    <a href="/console/quotes/import">Import another file</a></p>
                    """)
        case .preview:
            let rows = try await request.context.imports.rows(
                id, onlyErrors: onlyErrors, offset: (page - 1) * rowsPerPage, limit: rowsPerPage + 1)
            let path = "/console/quotes/import/\(id.uuidString.lowercased())"
            let toggle: HTML =
                onlyErrors
                ? "<a href=\"\(path)\">Show every row</a>"
                : "<a href=\"\(Pager.url(path, [("only", "errors")]))\">Show only the refused rows</a>"
            return .page(
                title: "Preview of \(draft.fileName)",
                body: """
                    <p class="notice">Nothing is saved yet. \(draft.total) rows: <strong>\(draft.valid) good</strong>,
                    <strong>\(draft.rejected) refused</strong> (they will be skipped).</p>
                    <form class="inline" method="post" action="\(path)/confirm">\(request.csrfField)
                    <button type="submit">Import the \(draft.valid) good rows</button>
                    <a class="button secondary" href="/console/quotes/import">Choose another file</a></form>
                    <p>\(toggle)</p>
                    <table class="cards"><thead><tr><th>Line</th><th>Text</th><th>Author</th><th>Category</th>
                    <th>Verdict</th></tr></thead><tbody>\(rows.prefix(rowsPerPage).map(row))</tbody></table>
                    \(Pager.links(path, filters: [("only", onlyErrors ? "errors" : nil)], page: page,
                              hasMore: rows.count > rowsPerPage))
                    """)
        }
    }

    static func confirm(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        try await run(request) { imports, id in try await imports.confirm(id) }
    }

    static func resume(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        try await run(request) { imports, id in try await imports.resume(id) }
    }

    /// Runs the draft's import when `claim` gets it (confirmed, or resumed), then shows its page. The batches run
    /// on after this answer; the page shows their progress from the database.
    private static func run(
        _ request: ConsoleRequest, claim: (QuoteImportDrafts, UUID) async throws -> Bool
    ) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let imports = request.context.imports, actor = request.actor
        if try await claim(imports, id) {
            Task { try? await imports.run(id, by: actor) }
        }
        return .redirect("/console/quotes/import/\(id.uuidString.lowercased())")
    }

    private static func row(_ row: ImportDraft.Row) -> HTML {
        let verdict: HTML = row.error.map { "<span class=\"error\">\($0)</span>" } ?? "good"
        return """
            <tr\(HTML(rendered: row.error == nil ? "" : " class=\"row-bad\""))><td data-label="Line">\(row.line)</td>
            <td>\(row.text)</td><td data-label="Author">\(row.author)</td><td data-label="Category">\(row.category)</td>
            <td data-label="Verdict">\(verdict)</td></tr>
            """
    }

    private static func uploadForm(_ request: ConsoleRequest, message: String?, status: Int) -> ConsoleAnswer {
        let error: HTML = message.map { "<p class=\"error\">\($0)</p>" } ?? .empty
        return .page(
            title: "Import quotes",
            body: """
                <p>A CSV file with a header row naming <code>text</code>, <code>author</code> and <code>category</code>,
                a JSON array of <code>{"text", "author", "category"}</code> objects, or JSON Lines. You see every row
                and its verdict before anything is saved.</p>
                \(error)
                <form class="stack" method="post" action="/console/quotes/import" enctype="multipart/form-data">\(
                request.csrfField)
                <label>File <input type="file" name="file" required
                accept=".csv,.json,.jsonl,text/csv,application/json">
                </label>
                <button type="submit">Preview</button></form>
                """, status: status)
    }
}
