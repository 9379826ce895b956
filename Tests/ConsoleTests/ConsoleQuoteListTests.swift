import Foundation
import QuoteVault
import TestSupport
import XCTest

/// The quote list sorted by any column and by favorites (a counter a trigger keeps), exported as CSV and JSON, and
/// rows deleted in bulk.
final class ConsoleQuoteListTests: XCTestCase {
    private func favorite(_ app: TestApp, _ quote: UUID, times: Int) async throws {
        for _ in 0..<times {
            let user = try await app.makeUser()
            try await app.withConnection {
                try $0.query("INSERT INTO user_favorites (user_id, quote_id) VALUES (\(user.id), \(quote))")
            }
        }
    }

    /// The texts of the list's rows, in order.
    private func texts(_ page: String) -> [String] {
        page.components(separatedBy: "aria-label=\"Select\"></td>\n<td>").dropFirst().map {
            String($0.prefix { $0 != "<" })
        }
    }

    func testTheListSortsByEachColumnAndByFavoritesKeptByATrigger() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        let ids = try await app.insertQuotes(["Banana", "Apple", "Cherry"])
        try await favorite(app, ids[1], times: 1)
        try await favorite(app, ids[2], times: 3)
        let byFavorites = try app.consoleGet("/console/quotes?sort=favorites&dir=desc", cookie: cookie).text
        XCTAssertEqual(texts(byFavorites), ["Cherry", "Apple", "Banana"], byFavorites)
        XCTAssertTrue(
            byFavorites.contains("<th aria-sort=\"descending\"><a href=\"/console/quotes?sort=favorites&amp;dir=asc\">")
        )
        XCTAssertEqual(
            texts(try app.consoleGet("/console/quotes?sort=text", cookie: cookie).text), ["Apple", "Banana", "Cherry"])
        XCTAssertEqual(
            texts(try app.consoleGet("/console/quotes?sort=text&dir=desc", cookie: cookie).text),
            ["Cherry", "Banana", "Apple"])
        XCTAssertEqual(
            texts(try app.consoleGet("/console/quotes?sort=favorites&dir=asc&category=", cookie: cookie).text),
            ["Banana", "Apple", "Cherry"])
        for sort in ["author", "category", "added"] {
            XCTAssertEqual(try app.consoleGet("/console/quotes?sort=\(sort)", cookie: cookie).status, 200)
        }
        XCTAssertEqual(
            texts(try app.consoleGet("/console/quotes?sort=nonsense;DROP", cookie: cookie).text).count, 3,
            "an unknown sort is the default order")

        // The counter follows every way a favorite goes: unfavorited, its user deleted.
        try await app.withConnection { try $0.query("DELETE FROM user_favorites WHERE quote_id = \(ids[2])") }
        let counts = try await app.withConnection { connection in
            try connection.query("SELECT coalesce(sum(favorites), 0)::int8 AS n FROM quote_favorite_counts")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(counts, 1)
        XCTAssertEqual(
            texts(try app.consoleGet("/console/quotes?sort=favorites", cookie: cookie).text).first, "Apple")
    }

    /// Page 2 of 60 is sought from the start, page 3 from the end (in the reverse order): both join up.
    func testADeepPageOfASortStartsRightAfterTheOneBefore() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        let names = (0..<60).map { String(format: "Item %02d", $0) }
        _ = try await app.insertQuotes(names, category: "love")
        _ = try await app.insertQuotes(["Other category"], category: "humor")
        func page(_ query: String) throws -> [String] {
            texts(try app.consoleGet("/console/quotes?\(query)", cookie: cookie).text)
        }
        XCTAssertEqual(try page("sort=text&category=love&page=2"), Array(names[25..<50]))
        XCTAssertEqual(try page("sort=text&category=love&page=3"), Array(names[50...]))
        XCTAssertEqual(try page("sort=text&dir=desc&category=love&page=3"), Array(names[..<10].reversed()))
        let byFavorites = try (1...3).flatMap { try page("sort=favorites&page=\($0)") }
        XCTAssertEqual(byFavorites.count, 61)
        XCTAssertEqual(Set(byFavorites).count, 61, "no quote on two pages, none left out")
    }

    /// The text and author orders read `quote_list_keys` (0083), which triggers keep as quotes are added, edited and
    /// deleted; a deep page's first row is found there by an index-only scan (no quote read per row skipped).
    func testTheTextAndAuthorOrdersFollowEveryChangeAndSeekIndexOnly() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        let ids = try await app.insertQuotes(["banana", "Apple", "cherry"])
        func sorted(_ sort: String) throws -> [String] {
            texts(try app.consoleGet("/console/quotes?sort=\(sort)", cookie: cookie).text)
        }
        XCTAssertEqual(try sorted("text"), ["Apple", "banana", "cherry"], "regardless of case")
        try await app.withConnection { connection in
            try connection.query("UPDATE quotes SET text = 'Zucchini', author = 'AAA first' WHERE id = \(ids[1])")
            try connection.query("DELETE FROM quotes WHERE id = \(ids[2])")
        }
        XCTAssertEqual(try sorted("text"), ["banana", "Zucchini"], "an edit moves the quote, a deletion removes it")
        XCTAssertEqual(try sorted("author").first, "Zucchini", "the author's key follows too")
        let keys = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM quote_list_keys")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(keys, 2, "one row of keys per quote")

        let plan = try await app.withConnection { connection in
            // Sequential scans off: two rows would rather be sorted whole than read through any index.
            try connection.execute(unsafeSQL: "VACUUM ANALYZE quote_list_keys")
            try connection.execute(unsafeSQL: "SET enable_seqscan = off")
            defer { _ = try? connection.execute(unsafeSQL: "RESET enable_seqscan") }
            return try connection.query(
                """
                EXPLAIN SELECT s.text_key, s.quote_id FROM quote_list_keys s WHERE s.category = 'wisdom'
                ORDER BY s.text_key, s.quote_id OFFSET 1 LIMIT 1
                """
            ).map { try $0.decode(at: 0, as: String.self) }.joined(separator: "\n")
        }
        XCTAssertTrue(plan.contains("Index Only Scan using quote_list_keys_text_idx"), plan)
    }

    func testTheFilterExportsAsCSVAndJSONWithFormulasDefused() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        let ids = try await app.insertQuotes(["=HYPERLINK(\"http://x\")", "Plain \"quoted\", text"], category: "humor")
        _ = try await app.insertQuotes(["Not humor"], category: "love")
        try await favorite(app, ids[0], times: 2)
        let list = try app.consoleGet("/console/quotes?category=humor&sort=favorites&dir=desc", cookie: cookie).text
        XCTAssertTrue(
            list.contains("href=\"/console/quotes/export.csv?category=humor&amp;sort=favorites&amp;dir=desc\""))

        let csv = try app.consoleGet(
            "/console/quotes/export.csv?category=humor&sort=favorites&dir=desc", cookie: cookie)
        XCTAssertEqual(csv.status, 200)
        XCTAssertEqual(csv.header("Content-Type"), "text/csv; charset=utf-8")
        XCTAssertTrue(csv.header("Content-Disposition")?.contains("attachment") == true)
        let lines = csv.text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        XCTAssertEqual(lines.count, 3, csv.text)
        XCTAssertEqual(lines[0], "\"id\",\"text\",\"author\",\"category\",\"created_at\",\"favorites\"")
        XCTAssertTrue(lines[1].contains("\"'=HYPERLINK(\"\"http://x\"\")\""), "the formula is defused: \(lines[1])")
        XCTAssertTrue(lines[1].hasSuffix(",\"2\""))
        XCTAssertTrue(lines[2].contains("\"Plain \"\"quoted\"\", text\""))

        let json = try app.consoleGet("/console/quotes/export.json?category=humor", cookie: cookie)
        XCTAssertEqual(json.status, 200)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.body)) as? [[String: Any]])
        XCTAssertEqual(
            Set(rows.compactMap { $0["text"] as? String }), ["=HYPERLINK(\"http://x\")", "Plain \"quoted\", text"])
        XCTAssertEqual(rows.first { $0["text"] as? String == "=HYPERLINK(\"http://x\")" }?["favorites"] as? Int, 2)
        XCTAssertEqual(try app.consoleGet("/console/quotes/export.csv").status, 303, "owners only")
    }

    func testBulkDeleteAsksThenDeletesEachAndRefusesFrozenOnesWithTheirReason() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        let ids = try await app.insertQuotes(["Goes one", "Goes two", "Was shown"])
        try await app.withConnection {
            try $0.query("INSERT INTO quote_of_day (date, quote_id) VALUES (current_date - 1, \(ids[2]))")
        }
        let list = try app.consoleGet("/console/quotes", cookie: cookie).text
        XCTAssertTrue(list.contains("action=\"/console/quotes/bulk-delete\""))
        let token = try XCTUnwrap(TestApp.csrfToken(in: list))
        func post(_ fields: [(String, String)]) throws -> HTTPTestResponse {
            let body = fields.map { "\($0.0)=\(TestApp.formEncode($0.1))" }.joined(separator: "&")
            return try app.client.send(
                "POST", "/console/quotes/bulk-delete",
                headers: ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"], body: Array(body.utf8)
            )
        }
        let selected = ids.map { ("id", $0.uuidString.lowercased()) }
        XCTAssertEqual(try post(selected).status, 403, "CSRF-checked")
        let confirm = try post([("csrf_token", token)] + selected)
        XCTAssertEqual(confirm.status, 200, confirm.text)
        XCTAssertTrue(confirm.text.contains("Delete 3 quote(s)?"))
        XCTAssertTrue(confirm.text.contains("(kept: "), "the frozen one is named up front")
        XCTAssertEqual(try app.client.get("/v1/quotes/\(ids[0])").status, 200, "asking deletes nothing")

        let done = try post([("csrf_token", token), ("confirm", "1")] + selected)
        XCTAssertEqual(done.status, 200, done.text)
        XCTAssertTrue(done.text.contains("Deleted 2 of 3 quote(s)."), done.text)
        XCTAssertTrue(done.text.contains("“Was shown”: ") && done.text.contains("quote of the day"), done.text)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(ids[0])").status, 404)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(ids[1])").status, 404)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(ids[2])").status, 200)
        let audited = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_audit WHERE action = 'quote.delete'")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(audited, 2)
    }
}
