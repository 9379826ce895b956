import Foundation
import QuoteVault
import TestSupport
import XCTest

/// Importing quotes from the console: a preview of every row and its verdict, nothing saved until confirmed.
final class ConsoleImportTests: XCTestCase {
    func testCSVWithABadRowPreviewsItSavesNothingUntilConfirmedThenTheGoodRows() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner("importer@example.com")
        let csv = """
            text,author,category
            "Stay hungry, stay foolish.",Stewart Brand,motivation
            A quote with no category,Nobody,poetry
            Love all trust a few,William Shakespeare,love
            ,Empty Text,humor

            """
        let uploaded = try upload(app, cookie: cookie, name: "quotes.csv", contents: csv)
        XCTAssertEqual(uploaded.status, 303, uploaded.text)
        let preview = try XCTUnwrap(uploaded.header("Location"))
        let page = try app.consoleGet(preview, cookie: cookie)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("Nothing is saved yet"))
        XCTAssertTrue(
            page.text.contains("<strong>2 good</strong>") && page.text.contains("<strong>2 refused</strong>"),
            page.text)
        XCTAssertTrue(page.text.contains("Stay hungry, stay foolish."))
        XCTAssertTrue(page.text.contains("category must be one of"), "the bad row's reason")
        XCTAssertTrue(page.text.contains("text is missing or empty"))
        let onlyErrors = try app.consoleGet(preview + "?only=errors", cookie: cookie).text
        XCTAssertTrue(onlyErrors.contains("poetry") && !onlyErrors.contains("Stay hungry"))
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 0, "nothing saved yet")

        // Confirming needs the CSRF token too.
        XCTAssertEqual(try app.consolePost(preview + "/confirm", cookie: cookie, fields: [:]).status, 403)
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 0)

        let confirmed = try app.consoleSubmit(preview + "/confirm", cookie: cookie, fields: [:], from: preview)
        XCTAssertEqual(confirmed.status, 303)
        let result = try await waitUntilDone(app, cookie: cookie, page: preview)
        XCTAssertTrue(result.contains("Import finished"), result)
        let quotes = try app.client.get("/v1/quotes").jsonObject()
        XCTAssertEqual(quotes["total"] as? Int, 2)
        let texts = (quotes["items"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        XCTAssertEqual(texts, ["Stay hungry, stay foolish.", "Love all trust a few"], "the file's first row newest")

        // Confirming again saves nothing twice.
        _ = try app.consolePost(
            preview + "/confirm", cookie: cookie,
            fields: ["csrf_token": TestApp.csrfToken(in: result) ?? ""])
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 2)
        let actions = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT action, after::text AS after FROM console_audit WHERE owner_id IS NOT NULL ORDER BY id
                """
            ).map {
                (try $0.decode("action", as: String.self), try $0.decode("after", as: String?.self) ?? "")
            }
        }
        XCTAssertEqual(actions.map(\.0), ["owner.sign_in", "import.upload", "quote.import"])
        XCTAssertTrue(actions[2].1.contains("\"inserted\": \"2\""), actions[2].1)
    }

    func testJSONImportOfManyRowsShowsCountsAndSkipsQuotesAlreadyThere() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let rows = (0..<1_200).map { ["text": "Imported quote \($0 % 1_100)", "author": "Bulk", "category": "humor"] }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: rows), as: UTF8.self)
        let uploaded = try upload(app, cookie: cookie, name: "bulk.json", contents: json)
        XCTAssertEqual(uploaded.status, 303, uploaded.text)
        let preview = try XCTUnwrap(uploaded.header("Location"))
        let page = try app.consoleGet(preview, cookie: cookie).text
        XCTAssertTrue(page.contains("1200 rows") && page.contains("page=2"), "counts, and the rows paged")
        _ = try app.consoleSubmit(preview + "/confirm", cookie: cookie, fields: [:], from: preview)
        let result = try await waitUntilDone(app, cookie: cookie, page: preview)
        XCTAssertTrue(result.contains("<th>Added</th><td>1100</td>"), result)
        XCTAssertTrue(result.contains("<td>100</td>"), "100 repeated rows were already there")
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 1_100)
    }

    func testAnImportLeftHalfDoneByAStoppedServerIsResumedFromItsLastBatch() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let rows = (0..<700).map { ["text": "Resumed quote \($0)", "author": "Resumer", "category": "wisdom"] }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: rows), as: UTF8.self)
        let preview = try XCTUnwrap(try upload(app, cookie: cookie, name: "r.json", contents: json).header("Location"))
        let id = String(preview.split(separator: "/").last!)
        // As a server that saved the first batch and stopped would leave it.
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quotes (text, author, category)
                SELECT 'Resumed quote ' || n, 'Resumer', 'wisdom' FROM generate_series(0, 499) AS n
                """)
            try connection.query(
                """
                UPDATE console_imports SET state = 'importing', processed = 500, inserted = 500,
                    updated_at = now() - interval '2 minutes'
                WHERE id = \(UUID(uuidString: id)!)
                """)
        }
        let stalled = try app.consoleGet(preview, cookie: cookie).text
        XCTAssertTrue(stalled.contains("Resume the import") && stalled.contains("Saved 500 of 700"), stalled)
        let resumed = try app.consoleSubmit(preview + "/resume", cookie: cookie, fields: [:], from: preview)
        XCTAssertEqual(resumed.status, 303)
        let result = try await waitUntilDone(app, cookie: cookie, page: preview)
        XCTAssertTrue(result.contains("<th>Added</th><td>700</td>"), result)
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 700)
    }

    func testUnreadableFilesAreRefusedOnTheUploadPage() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let missingColumn = try upload(app, cookie: cookie, name: "bad.csv", contents: "text,author\nA,B\n")
        XCTAssertEqual(missingColumn.status, 422)
        XCTAssertTrue(missingColumn.text.contains("the CSV header lacks category"), missingColumn.text)
        let notJSON = try upload(app, cookie: cookie, name: "bad.json", contents: "[{\"text\": ")
        XCTAssertEqual(notJSON.status, 422)
        let drafts = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_imports")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(drafts, 0)
    }

    func testAFileOfTheMostRowsIsPreviewedAndOneMoreIsRefused() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        func csv(rows: Int) -> String {
            "text,author,category\n" + (0..<rows).map { "Row \($0),A,love\n" }.joined()
        }
        let atTheLimit = try upload(
            app, cookie: cookie, name: "most.csv", contents: csv(rows: QuoteImportDrafts.maximumRows))
        XCTAssertEqual(atTheLimit.status, 303, "at the limit: previewed")
        let past = try upload(
            app, cookie: cookie, name: "more.csv", contents: csv(rows: QuoteImportDrafts.maximumRows + 1))
        XCTAssertEqual(past.status, 422)
        XCTAssertTrue(past.text.contains("at most \(QuoteImportDrafts.maximumRows) at once"), past.text)
        let drafts = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_imports")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(drafts, 1, "only the file at the limit became a draft")
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 0, "nothing saved")
    }

    func testAnUploadWithoutASessionIsRefusedBeforeItsBodyIsRead() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        // Headers announcing 5 MB, and not one byte of the body: the answer comes from the headers alone.
        let refused = try app.consoleUploadHeaders(length: 5_000_000, cookie: "qv_console=not-a-session")
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(refused.header("Content-Security-Policy"), TestApp.consoleContentSecurityPolicy)
    }

    /// Posts the upload form (multipart, with the CSRF token of the upload page).
    private func upload(_ app: TestApp, cookie: String, name: String, contents: String) throws -> HTTPTestResponse {
        let form = try app.consoleGet("/console/quotes/import", cookie: cookie).text
        let token = try XCTUnwrap(TestApp.csrfToken(in: form))
        let boundary = "console-test-\(UUID().uuidString)"
        let body = """
            --\(boundary)\r
            Content-Disposition: form-data; name="csrf_token"\r
            \r
            \(token)\r
            --\(boundary)\r
            Content-Disposition: form-data; name="file"; filename="\(name)"\r
            Content-Type: application/octet-stream\r
            \r
            \(contents)\r
            --\(boundary)--\r

            """
        return try app.client.send(
            "POST", "/console/quotes/import",
            headers: [
                "Cookie": cookie, "Content-Type": "multipart/form-data; boundary=\(boundary)",
            ], body: Array(body.utf8))
    }

    /// The import page once it no longer shows progress (bounded: at most 30 seconds).
    private func waitUntilDone(_ app: TestApp, cookie: String, page: String) async throws -> String {
        for _ in 0..<300 {
            let text = try app.consoleGet(page, cookie: cookie).text
            if !text.contains("Importing ") { return text }
            XCTAssertTrue(text.contains("http-equiv=\"refresh\""), "the progress page refreshes itself")
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTFail("the import did not finish")
        return ""
    }

    func testACSVWithAByteOrderMarkIsReadAndAnImportIsOneAuditRow() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let rows = (0..<(QuoteImportDrafts.batchSize * 2 + 1)).map { "Quote number \($0),Counter,humor" }
        let csv = "\u{FEFF}text,author,category\n" + rows.joined(separator: "\n") + "\n"
        let uploaded = try upload(app, cookie: cookie, name: "excel.csv", contents: csv)
        XCTAssertEqual(uploaded.status, 303, uploaded.text)
        let preview = try XCTUnwrap(uploaded.header("Location"))
        XCTAssertEqual(
            try app.consoleSubmit(preview + "/confirm", cookie: cookie, fields: [:], from: preview).status, 303)
        _ = try await waitUntilDone(app, cookie: cookie, page: preview)
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, rows.count)
        let audit = try await app.withConnection { connection in
            try connection.query("SELECT after::text AS after FROM console_audit WHERE action = 'quote.import'")
                .map { try $0.decode("after", as: String.self) }
        }
        XCTAssertEqual(audit.count, 1, "one row for the import's three batches")
        XCTAssertTrue(audit.first?.contains("\"inserted\": \"\(rows.count)\"") == true, audit.first ?? "")
    }
}
