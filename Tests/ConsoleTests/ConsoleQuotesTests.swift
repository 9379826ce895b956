import Foundation
import QuoteVault
import TestSupport
import XCTest

/// The console's quotes: list, search and filter; add, edit, delete, each audited; seen through `/v1`.
final class ConsoleQuotesTests: XCTestCase {
    func testAddEditAndDeleteAQuoteAndSeeEachThroughV1() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner("editor@example.com")
        let added = try app.consoleSubmit(
            "/console/quotes", cookie: cookie,
            fields: [
                "text": "  Simplicity is   prerequisite for reliability. ", "author": "Edsger W. Dijkstra",
                "category": "wisdom",
            ], from: "/console/quotes/new")
        XCTAssertEqual(added.status, 303, added.text)
        let location = try XCTUnwrap(added.header("Location"))
        let id = try XCTUnwrap(location.split(separator: "/").dropFirst(2).first.map(String.init))
        let created = try app.client.get("/v1/quotes/\(id)").jsonObject()
        XCTAssertEqual(created["text"] as? String, "Simplicity is prerequisite for reliability.", "normalised")
        XCTAssertEqual(created["author"] as? String, "Edsger W. Dijkstra")
        XCTAssertEqual(created["category"] as? String, "wisdom")
        XCTAssertTrue(try app.consoleGet(location, cookie: cookie).text.contains("The quote was added"))

        let edited = try app.consoleSubmit(
            "/console/quotes/\(id)", cookie: cookie,
            fields: [
                "text": "Simplicity is prerequisite for reliability!", "author": "E. W. Dijkstra",
                "category": "success",
            ], from: "/console/quotes/\(id)/edit")
        XCTAssertEqual(edited.status, 303, edited.text)
        let changed = try app.client.get("/v1/quotes/\(id)").jsonObject()
        XCTAssertEqual(changed["text"] as? String, "Simplicity is prerequisite for reliability!")
        XCTAssertEqual(changed["author"] as? String, "E. W. Dijkstra")
        XCTAssertEqual(changed["category"] as? String, "success")

        let confirmation = try app.consoleGet("/console/quotes/\(id)/delete", cookie: cookie)
        XCTAssertEqual(confirmation.status, 200)
        XCTAssertTrue(confirmation.text.contains("E. W. Dijkstra"))
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").status, 200, "a confirmation page deletes nothing")
        let deleted = try app.consoleSubmit(
            "/console/quotes/\(id)/delete", cookie: cookie, fields: [:],
            from: "/console/quotes/\(id)/delete")
        XCTAssertEqual(deleted.status, 303)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").status, 404)
        XCTAssertEqual(try app.consoleGet("/console/quotes/\(id)/edit", cookie: cookie).status, 404)

        // Every change has its audit row, with the values before and after, written with the change.
        let audit = try await app.withConnection { connection in
            try connection.query(
                """
                SELECT owner_email, action, target, before::text AS before, after::text AS after FROM console_audit
                WHERE action LIKE 'quote.%' ORDER BY id
                """
            ).map { row in
                [
                    try row.decode("owner_email", as: String.self), try row.decode("action", as: String.self),
                    try row.decode("target", as: String.self), try row.decode("before", as: String?.self) ?? "",
                    try row.decode("after", as: String?.self) ?? "",
                ]
            }
        }
        XCTAssertEqual(audit.map { $0[1] }, ["quote.add", "quote.edit", "quote.delete"])
        XCTAssertTrue(audit.allSatisfy { $0[0] == "editor@example.com" && $0[2] == id })
        XCTAssertEqual(audit[0][3], "", "nothing before an add")
        XCTAssertTrue(audit[0][4].contains("Edsger W. Dijkstra"))
        XCTAssertTrue(audit[1][3].contains("Edsger W. Dijkstra") && audit[1][3].contains("wisdom"), audit[1][3])
        XCTAssertTrue(audit[1][4].contains("E. W. Dijkstra") && audit[1][4].contains("success"), audit[1][4])
        XCTAssertTrue(audit[2][3].contains("E. W. Dijkstra"))
        XCTAssertEqual(audit[2][4], "")
        let page = try app.consoleGet("/console/audit?action=quote.edit", cookie: cookie).text
        XCTAssertTrue(page.contains("quote.edit") && !page.contains("quote.delete</td>"), page)
    }

    func testBadQuotesAreRefusedOnThePageAndNothingIsSaved() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let good = ["text": "Well begun is half done.", "author": "Aristotle", "category": "motivation"]
        let cases: [([String: String], String)] = [
            (good.merging(["text": "   "]) { $1 }, "Text is missing or empty"),
            (good.merging(["category": "poetry"]) { $1 }, "Category must be one of"),
            (good.merging(["author": ""]) { $1 }, "Author is missing or empty"),
            (good.merging(["text": String(repeating: "a", count: 301)]) { $1 }, "longer than 300"),
        ]
        for (fields, message) in cases {
            let refused = try app.consoleSubmit(
                "/console/quotes", cookie: cookie, fields: fields,
                from: "/console/quotes/new")
            XCTAssertEqual(refused.status, 422, message)
            XCTAssertTrue(refused.text.contains("Nothing was saved") && refused.text.contains(message), refused.text)
            let typed = fields["author"]!.isEmpty ? fields["text"]! : fields["author"]!
            XCTAssertTrue(refused.text.contains(HTMLEscaped(typed)), "the form keeps what was typed")
        }
        // Without the CSRF token, even a good quote is refused.
        let forged = try app.consolePost("/console/quotes", cookie: cookie, fields: good)
        XCTAssertEqual(forged.status, 403)
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 0, "nothing saved")

        let saved = try app.consoleSubmit("/console/quotes", cookie: cookie, fields: good, from: "/console/quotes/new")
        XCTAssertEqual(saved.status, 303)
        let duplicate = try app.consoleSubmit(
            "/console/quotes", cookie: cookie, fields: good,
            from: "/console/quotes/new")
        XCTAssertEqual(duplicate.status, 422)
        XCTAssertTrue(duplicate.text.contains("already has this text and author"))
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 1)

        // An edit with an unknown category changes nothing either.
        let id = try XCTUnwrap(saved.header("Location")?.split(separator: "/").dropFirst(2).first.map(String.init))
        let badEdit = try app.consoleSubmit(
            "/console/quotes/\(id)", cookie: cookie,
            fields: good.merging(["category": "nope"]) { $1 },
            from: "/console/quotes/\(id)/edit")
        XCTAssertEqual(badEdit.status, 422)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["category"] as? String, "motivation")
        let edits = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_audit WHERE action = 'quote.edit'")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(edits, 0)
    }

    func testAQuoteThatHasBeenAQuoteOfTheDayCannotBeChangedOrDeleted() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let fields = ["text": "Shown once, kept forever.", "author": "Archivist", "category": "wisdom"]
        let saved = try app.consoleSubmit(
            "/console/quotes", cookie: cookie, fields: fields,
            from: "/console/quotes/new")
        let id = try XCTUnwrap(saved.header("Location")?.split(separator: "/").dropFirst(2).first.map(String.init))
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quote_of_day (date, quote_id) VALUES (current_date - 1, \(UUID(uuidString: id)!))
                """)
        }
        let edit = try app.consoleSubmit(
            "/console/quotes/\(id)", cookie: cookie,
            fields: fields.merging(["text": "Rewritten history."]) { $1 },
            from: "/console/quotes/\(id)/edit")
        XCTAssertEqual(edit.status, 409)
        XCTAssertTrue(edit.text.contains("has been a quote of the day"), edit.text)
        let delete = try app.consoleSubmit(
            "/console/quotes/\(id)/delete", cookie: cookie, fields: [:],
            from: "/console/quotes/\(id)/delete")
        XCTAssertEqual(delete.status, 409)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, fields["text"])
    }

    func testListPagesSearchesAndFiltersByCategory() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        try await app.withConnection { connection in
            for index in 0..<30 {
                let category = index % 2 == 0 ? "humor" : "love"
                try connection.query(
                    """
                    INSERT INTO quotes (text, author, category, created_at)
                    VALUES (\("Quote number \(index) <b>bold</b>"), \("Author \(index)"), \(category),
                            now() - \(index) * interval '1 minute')
                    """)
            }
        }
        let first = try app.consoleGet("/console/quotes", cookie: cookie).text
        XCTAssertTrue(first.contains("Quote number 0 &lt;b&gt;bold&lt;/b&gt;"), "escaped, never markup")
        XCTAssertFalse(first.contains("<b>bold</b>"))
        XCTAssertTrue(first.contains("Quote number 24 ") && !first.contains("Quote number 25 "), "25 per page")
        XCTAssertTrue(first.contains("page=2"))
        let second = try app.consoleGet("/console/quotes?page=2", cookie: cookie).text
        XCTAssertTrue(second.contains("Quote number 25 ") && second.contains("Quote number 29 "))
        let humor = try app.consoleGet("/console/quotes?category=humor", cookie: cookie).text
        XCTAssertTrue(humor.contains("Quote number 28 ") && !humor.contains("Quote number 1 "))
        let search = try app.consoleGet("/console/quotes?q=number%2017", cookie: cookie).text
        XCTAssertTrue(search.contains("Quote number 17 ") && !search.contains("Quote number 16 "), search)
        let byAuthor = try app.consoleGet("/console/quotes?q=Author%203&in=author&category=love", cookie: cookie).text
        XCTAssertTrue(byAuthor.contains("Author 3<") && !byAuthor.contains("Author 4<"))
        let unknown = try app.consoleGet("/console/quotes?category=poetry", cookie: cookie)
        XCTAssertEqual(unknown.status, 200)
        XCTAssertTrue(unknown.text.contains("Unknown category"))
        let tooLong = try app.consoleGet("/console/quotes?q=\(String(repeating: "x", count: 201))", cookie: cookie)
        XCTAssertTrue(tooLong.text.contains("at most 200 characters"), tooLong.text)
    }

    func testAFormAsBrowsersEncodeItIsReadAsTyped() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let form = try app.consoleGet("/console/quotes/new", cookie: cookie).text
        let token = try XCTUnwrap(TestApp.csrfToken(in: form))
        // Spaces as "+", a literal "+" as %2B, UTF-8 percent-encoded, as a browser sends the form.
        let body =
            "csrf_token=\(token)&text=1+%2B+1+%3D+2%2C+caf%C3%A9+%26+cr%C3%A8me"
            + "&author=G%C3%B6del&category=wisdom"
        let saved = try app.client.send(
            "POST", "/console/quotes",
            headers: [
                "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded",
            ], body: Array(body.utf8))
        XCTAssertEqual(saved.status, 303, saved.text)
        let id = try XCTUnwrap(saved.header("Location")?.split(separator: "/").dropFirst(2).first.map(String.init))
        let quote = try app.client.get("/v1/quotes/\(id)").jsonObject()
        XCTAssertEqual(quote["text"] as? String, "1 + 1 = 2, café & crème")
        XCTAssertEqual(quote["author"] as? String, "Gödel")
    }

    private func HTMLEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }

    private func addQuote(_ app: TestApp, _ cookie: String, _ text: String) throws -> String {
        let saved = try app.consoleSubmit(
            "/console/quotes", cookie: cookie, fields: ["text": text, "author": "Someone", "category": "wisdom"],
            from: "/console/quotes/new")
        return try XCTUnwrap(saved.header("Location")?.split(separator: "/").dropFirst(2).first.map(String.init))
    }

    func testAQuoteOnlyAComingDayHoldsIsNotCalledShownAndTheFormsSayWhyUpFront() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let pinned = try addQuote(app, cookie, "Pinned for a coming day.")
        let chosen = try addQuote(app, cookie, "Chosen ahead by the seed.")
        let shown = try addQuote(app, cookie, "Shown yesterday.")
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quote_of_day (date, quote_id, pinned) VALUES
                    (current_date + 30, \(UUID(uuidString: pinned)!), true),
                    (current_date + 31, \(UUID(uuidString: chosen)!), false),
                    (current_date - 1, \(UUID(uuidString: shown)!), false)
                """)
        }
        // A pin is an owner's choice: the deletion is refused, naming the day, and the page says so before.
        let pinnedPage = try app.consoleGet("/console/quotes/\(pinned)/delete", cookie: cookie).text
        XCTAssertTrue(pinnedPage.contains("is pinned to"), pinnedPage)
        XCTAssertFalse(pinnedPage.contains("has been a quote of the day"), pinnedPage)
        let refused = try app.consoleSubmit(
            "/console/quotes/\(pinned)/delete", cookie: cookie, fields: [:], from: "/console/quotes/\(pinned)/edit")
        XCTAssertEqual(refused.status, 409)
        XCTAssertTrue(refused.text.contains("is pinned to") && !refused.text.contains("has been"), refused.text)
        // The seed's choice of a coming day binds nothing: the quote goes, and so does that choice.
        let deleted = try app.consoleSubmit(
            "/console/quotes/\(chosen)/delete", cookie: cookie, fields: [:], from: "/console/quotes/\(chosen)/edit")
        XCTAssertEqual(deleted.status, 303, deleted.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(chosen)").status, 404)
        // A shown quote's edit form warns before any save, and offers no save.
        let frozenForm = try app.consoleGet("/console/quotes/\(shown)/edit", cookie: cookie).text
        XCTAssertTrue(frozenForm.contains("has been a quote of the day"), frozenForm)
        XCTAssertTrue(frozenForm.contains("<button type=\"submit\" disabled>Save</button>"), frozenForm)
    }

    func testASaveOverAnotherOwnersNewerSaveIsRefusedAndShowsTheirs() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let ada = try await app.consoleOwner()
        let bob = try await app.consoleOwner()
        let id = try addQuote(app, ada, "The first wording.")
        let form = "/console/quotes/\(id)/edit"
        let adaPage = try app.consoleGet(form, cookie: ada).text
        let bobPage = try app.consoleGet(form, cookie: bob).text
        func save(_ page: String, _ cookie: String, _ text: String) throws -> HTTPTestResponse {
            try app.consolePost(
                "/console/quotes/\(id)", cookie: cookie,
                fields: [
                    "csrf_token": try XCTUnwrap(TestApp.csrfToken(in: page)),
                    "version": try XCTUnwrap(TestApp.hiddenValue("version", in: page)),
                    "text": text, "author": "Someone", "category": "wisdom",
                ])
        }
        XCTAssertEqual(try save(adaPage, ada, "Ada's wording.").status, 303)
        let stale = try save(bobPage, bob, "Bob's wording.")
        XCTAssertEqual(stale.status, 409, stale.text)
        XCTAssertTrue(stale.text.contains("another owner changed this quote"), stale.text)
        XCTAssertTrue(stale.text.contains("Ada&#39;s wording.") && stale.text.contains("Bob&#39;s wording."))
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Ada's wording.")
        // The refusal's form carries Ada's version: saving it again replaces hers knowingly.
        XCTAssertEqual(try save(stale.text, bob, "Bob's wording.").status, 303)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Bob's wording.")
    }

    func testTheFormsLimitsAreTheServersLimits() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let form = try app.consoleGet("/console/quotes/new", cookie: cookie).text
        XCTAssertTrue(form.contains("name=\"text\" maxlength=\"\(QuoteImporter.maximumTextLength)\""), form)
        XCTAssertTrue(form.contains("maxlength=\"\(QuoteImporter.maximumAuthorLength)\" required"), form)
        let longest = ["text": String(repeating: "t", count: 300), "author": String(repeating: "a", count: 200)]
        let saved = try app.consoleSubmit(
            "/console/quotes", cookie: cookie, fields: longest.merging(["category": "humor"]) { $1 },
            from: "/console/quotes/new")
        XCTAssertEqual(saved.status, 303, "the form's longest values are accepted")
    }

    func testTheListCountsFavoritesAndKnowsItsLastPage() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        let ids = try await app.insertQuotes((0..<30).map { "Liked or not \($0)" })
        for _ in 0..<3 {
            let user = try await app.makeUser()
            try await app.withConnection { connection in
                try connection.query(
                    "INSERT INTO user_favorites (user_id, quote_id) VALUES (\(user.id), \(ids[29]))")
            }
        }
        let first = try app.consoleGet("/console/quotes", cookie: cookie).text
        XCTAssertTrue(first.contains("<td data-label=\"Favorites\">3</td>"), first)
        XCTAssertTrue(first.contains("Page 1 of 2"), first)
        let far = try app.consoleGet("/console/quotes?page=999999", cookie: cookie)
        XCTAssertEqual(far.status, 303, "not page 1 in silence")
        XCTAssertEqual(far.header("Location"), "/console/quotes?page=2")
    }
}
