import Foundation
import QuoteVault
import TestSupport
import XCTest

/// Undo from the audit log: an edit back to its values before, a deleted quote back with its id, each audited;
/// refused, changing nothing, once the quote changed since the row.
final class ConsoleAuditUndoTests: XCTestCase {
    func testAnEditIsUndoneOnceAndTheUndoIsAudited() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner("undoer@example.com")
        let id = try addQuote(app, cookie, text: "First words.", author: "Writer")
        try editQuote(app, cookie, id, text: "Second words.", author: "Editor")
        let edit = try await auditRow(app, action: "quote.edit", target: id)

        let page = try app.consoleGet("/console/audit", cookie: cookie).text
        XCTAssertTrue(page.contains("href=\"/console/audit/\(edit)/undo\""), "the edit row offers Undo")
        let add = try await auditRow(app, action: "quote.add", target: id)
        XCTAssertFalse(page.contains("/console/audit/\(add)/undo"), "an add has no values before to go back to")

        let forged = try app.consolePost("/console/audit/\(edit)/undo", cookie: cookie, fields: [:])
        XCTAssertEqual(forged.status, 403, "no CSRF token, no undo")
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Second words.")

        let undone = try undo(app, cookie, edit)
        XCTAssertEqual(undone.status, 303, undone.text)
        let quote = try app.client.get("/v1/quotes/\(id)").jsonObject()
        XCTAssertEqual(quote["text"] as? String, "First words.")
        XCTAssertEqual(quote["author"] as? String, "Writer")
        let notice = try app.consoleGet(try XCTUnwrap(undone.header("Location")), cookie: cookie).text
        XCTAssertTrue(notice.contains("The change was undone."))
        XCTAssertTrue(notice.contains("undone by #"), "the row says it was undone")

        let undoRows = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT owner_email, target, undoes, before::text AS before, after::text AS after FROM console_audit
                WHERE action = 'quote.undo'
                """
            ).map {
                [
                    try $0.decode("owner_email", as: String.self), try $0.decode("target", as: String.self),
                    String(try $0.decode("undoes", as: Int64.self)), try $0.decode("before", as: String.self),
                    try $0.decode("after", as: String.self),
                ]
            }
        }
        XCTAssertEqual(undoRows.count, 1)
        XCTAssertEqual(Array(undoRows[0].prefix(3)), ["undoer@example.com", id, String(edit)])
        XCTAssertTrue(
            undoRows[0][3].contains("Second words.") && undoRows[0][4].contains("First words."), undoRows[0].joined())

        let again = try undo(app, cookie, edit)
        XCTAssertEqual(again.status, 409)
        XCTAssertTrue(again.text.contains("has been undone already"), again.text)
    }

    func testAnUndoIsRefusedOnceTheQuoteChangedSince() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let id = try addQuote(app, cookie, text: "Original text.", author: "Author")
        try editQuote(app, cookie, id, text: "Edited once.", author: "Author")
        let first = try await auditRow(app, action: "quote.edit", target: id)
        try editQuote(app, cookie, id, text: "Edited twice.", author: "Author")

        let refused = try undo(app, cookie, first)
        XCTAssertEqual(refused.status, 409)
        XCTAssertTrue(refused.text.contains("The quote changed after audit row #\(first)"), refused.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Edited twice.")

        // A write that leaves no audit row (plain SQL) changes the version the edit left: refused too, with the
        // quote as it is now.
        let second = try await app.withConnection { connection in
            try connection.query(
                "SELECT max(id) AS id FROM console_audit WHERE action = 'quote.edit'"
            )[0].decode("id", as: Int64.self)
        }
        try await app.withConnection { connection in
            try connection.query("UPDATE quotes SET category = 'humor' WHERE id = \(UUID(uuidString: id)!)")
            try connection.query("UPDATE quotes SET category = 'wisdom' WHERE id = \(UUID(uuidString: id)!)")
        }
        let stale = try undo(app, cookie, second)
        XCTAssertEqual(stale.status, 409)
        XCTAssertTrue(stale.text.contains("now “Edited twice.”"), stale.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Edited twice.")
        let undos = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_audit WHERE action = 'quote.undo'")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(undos, 0, "a refused undo writes no audit row")
        let notAnEdit = try await auditRow(app, action: "quote.add", target: id)
        let add = try undo(app, cookie, notAnEdit)
        XCTAssertEqual(add.status, 409)
        XCTAssertEqual(
            try undo(app, cookie, 999_999)
                .status, 404)
    }

    func testADeletedQuoteComesBackWithItsIdWhileTheIdIsFree() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let id = try addQuote(app, cookie, text: "Gone and back.", author: "Phoenix")
        let created = try app.client.get("/v1/quotes/\(id)").jsonObject()["created_at"] as? String
        let deleted = try app.consoleSubmit(
            "/console/quotes/\(id)/delete", cookie: cookie, fields: [:], from: "/console/quotes/\(id)/delete")
        XCTAssertEqual(deleted.status, 303)
        let deletion = try await auditRow(app, action: "quote.delete", target: id)

        let undone = try undo(app, cookie, deletion)
        XCTAssertEqual(undone.status, 303, undone.text)
        let back = try app.client.get("/v1/quotes/\(id)").jsonObject()
        XCTAssertEqual(back["text"] as? String, "Gone and back.")
        XCTAssertEqual(back["created_at"] as? String, created, "back in its place in the list")

        // Deleted again, and the id taken by a quote of its own meanwhile: that undo is refused.
        let again = try app.consoleSubmit(
            "/console/quotes/\(id)/delete", cookie: cookie, fields: [:], from: "/console/quotes/\(id)/delete")
        XCTAssertEqual(again.status, 303)
        let second = try await app.withConnection { connection in
            try connection.query("SELECT max(id) AS id FROM console_audit WHERE action = 'quote.delete'")[0]
                .decode("id", as: Int64.self)
        }
        try await app.withConnection { connection in
            try connection.query(
                "INSERT INTO quotes (id, text, author, category) VALUES (\(UUID(uuidString: id)!), 'Squatter', 'X', 'love')"
            )
        }
        let refused = try undo(app, cookie, second)
        XCTAssertEqual(refused.status, 409)
        XCTAssertTrue(refused.text.contains("exists again"), refused.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Squatter")
    }

    func testAServiceRoleEditThroughRestIsUndone() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let id = try addQuote(app, cookie, text: "Before the tool.", author: "Owner")
        let key = app.application.context.configuration.supabaseServiceRoleKey
        let patched = try app.client.send(
            "PATCH", "/rest/v1/quotes?id=eq.\(id)",
            headers: ["apikey": key, "Authorization": "Bearer \(key)", "Content-Type": "application/json"],
            body: Array(#"{"text":"After the tool."}"#.utf8))
        XCTAssertTrue([200, 204].contains(patched.status), patched.text)
        let update = try await auditRow(app, action: "rest.quotes.update", target: id)
        let undone = try undo(app, cookie, update)
        XCTAssertEqual(undone.status, 303, undone.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Before the tool.")
    }

    /// The Undo button leads to a page showing what will change; only its form's post acts, and a refusal on
    /// that page gives the reason the post would.
    func testTheUndoButtonLeadsToAConfirmationShowingTheChange() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let id = try addQuote(app, cookie, text: "Words before.", author: "Same Author")
        try editQuote(app, cookie, id, text: "Words after.", author: "Same Author")
        let edit = try await auditRow(app, action: "quote.edit", target: id)

        let confirm = try app.consoleGet("/console/audit/\(edit)/undo", cookie: cookie)
        XCTAssertEqual(confirm.status, 200, confirm.text)
        let text = confirm.text
        XCTAssertTrue(text.contains("Undo audit row #\(edit)?"), text)
        XCTAssertTrue(
            text.contains(
                "<td data-label=\"Now\">Words after.</td><td data-label=\"After the undo\">Words before.</td>"),
            "the text now and after: \(text)")
        XCTAssertTrue(text.contains("<td data-label=\"Now\">Same Author</td>"), text)
        XCTAssertTrue(text.contains("<form class=\"inline\" method=\"post\" action=\"/console/audit/\(edit)/undo\">"))
        XCTAssertNotNil(TestApp.csrfToken(in: text), "the form carries the session's token")
        XCTAssertEqual(
            try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Words after.",
            "the confirmation page changes nothing")

        let undone = try undo(app, cookie, edit)
        XCTAssertEqual(undone.status, 303, undone.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Words before.")
        let again = try app.consoleGet("/console/audit/\(edit)/undo", cookie: cookie)
        XCTAssertEqual(again.status, 409, "an undone row offers no second undo")
        XCTAssertTrue(again.text.contains("has been undone already"), again.text)
        XCTAssertFalse(again.text.contains("action=\"/console/audit/\(edit)/undo\""), "no form on a refusal")

        // A deletion: the page says the quote comes back, and shows it.
        let deleted = try app.consoleSubmit(
            "/console/quotes/\(id)/delete", cookie: cookie, fields: [:], from: "/console/quotes/\(id)/delete")
        XCTAssertEqual(deleted.status, 303)
        let deletion = try await auditRow(app, action: "quote.delete", target: id)
        let comesBack = try app.consoleGet("/console/audit/\(deletion)/undo", cookie: cookie)
        XCTAssertEqual(comesBack.status, 200, comesBack.text)
        XCTAssertTrue(comesBack.text.contains("The deleted quote comes back"), comesBack.text)
        XCTAssertTrue(comesBack.text.contains("<p>Words before.</p>"), comesBack.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").status, 404, "still deleted until the post")

        // The quote changed since an edit: the confirmation page refuses with the post's reason.
        let other = try addQuote(app, cookie, text: "One.", author: "Someone")
        try editQuote(app, cookie, other, text: "Two.", author: "Someone")
        let stale = try await auditRow(app, action: "quote.edit", target: other)
        try editQuote(app, cookie, other, text: "Three.", author: "Someone")
        let refused = try app.consoleGet("/console/audit/\(stale)/undo", cookie: cookie)
        XCTAssertEqual(refused.status, 409)
        XCTAssertTrue(refused.text.contains("The quote changed after audit row #\(stale)"), refused.text)
        XCTAssertEqual(try app.consoleGet("/console/audit/999999/undo", cookie: cookie).status, 404)
        XCTAssertEqual(try app.consoleGet("/console/audit/x/undo", cookie: cookie).status, 404)
    }

    /// Posts the Undo form of audit row `row`: from its confirmation page when it has one, else (a refusal) with
    /// the audit page's token, as a direct post would be.
    private func undo(_ app: TestApp, _ cookie: String, _ row: Int64) throws -> HTTPTestResponse {
        let confirmation = "/console/audit/\(row)/undo"
        let shown = try app.consoleGet(confirmation, cookie: cookie).status == 200
        return try app.consoleSubmit(
            confirmation, cookie: cookie, fields: [:], from: shown ? confirmation : "/console/audit")
    }

    private func addQuote(_ app: TestApp, _ cookie: String, text: String, author: String) throws -> String {
        let added = try app.consoleSubmit(
            "/console/quotes", cookie: cookie, fields: ["text": text, "author": author, "category": "wisdom"],
            from: "/console/quotes/new")
        XCTAssertEqual(added.status, 303, added.text)
        return try XCTUnwrap(added.header("Location")?.split(separator: "/").dropFirst(2).first.map(String.init))
    }

    private func editQuote(_ app: TestApp, _ cookie: String, _ id: String, text: String, author: String) throws {
        let edited = try app.consoleSubmit(
            "/console/quotes/\(id)", cookie: cookie, fields: ["text": text, "author": author, "category": "wisdom"],
            from: "/console/quotes/\(id)/edit")
        XCTAssertEqual(edited.status, 303, edited.text)
    }

    /// The newest audit row of `action` about quote `target`.
    private func auditRow(_ app: TestApp, action: String, target: String) async throws -> Int64 {
        try await app.withConnection { connection in
            try connection.query(
                "SELECT max(id) AS id FROM console_audit WHERE action = \(action) AND target = \(target)"
            )[0].decode("id", as: Int64.self)
        }
    }
}
