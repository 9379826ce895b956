import Foundation
import QuoteVault
import TestSupport
import XCTest

/// The audit page: every owner action, searchable by owner, action and text, paged.
final class ConsoleAuditTests: XCTestCase {
    func testAuditLogIsSearchableByOwnerActionAndTextAndPaged() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let ada = try await app.consoleOwner("ada@example.com")
        let bob = try await app.consoleOwner("bob@example.com")
        for (cookie, text) in [(ada, "Ada's <i>remarkable</i> quote"), (bob, "Bob's ordinary quote")] {
            let added = try app.consoleSubmit(
                "/console/quotes", cookie: cookie,
                fields: [
                    "text": text, "author": "Someone", "category": "humor",
                ], from: "/console/quotes/new")
            XCTAssertEqual(added.status, 303)
        }
        let byOwner = try app.consoleGet("/console/audit?owner=ADA", cookie: bob).text
        XCTAssertTrue(byOwner.contains("ada@example.com") && !byOwner.contains("bob@example.com</td>"))
        XCTAssertTrue(byOwner.contains("&lt;i&gt;remarkable&lt;/i&gt;"), "values escaped")
        let byText = try app.consoleGet("/console/audit?q=remarkable", cookie: bob).text
        XCTAssertTrue(byText.contains("quote.add") && !byText.contains("ordinary"), byText)
        let byAction = try app.consoleGet("/console/audit?action=owner.sign_in", cookie: bob).text
        XCTAssertFalse(byAction.contains(">quote.add</td>"))
        XCTAssertTrue(byAction.contains(">owner.sign_in</td>"))
        let literal = try app.consoleGet("/console/audit?q=%25", cookie: bob).text
        XCTAssertFalse(literal.contains(">quote.add</td>"), "% matches itself, not everything")

        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO console_audit (owner_email, action, target, at)
                SELECT 'bulk@example.com', 'test.bulk', 'item ' || n, now() - n * interval '1 second'
                FROM generate_series(1, 60) AS n
                """)
        }
        let first = try app.consoleGet("/console/audit?action=test.bulk", cookie: ada).text
        XCTAssertTrue(first.contains("item 1<") && first.contains("item 50<") && !first.contains("item 51<"))
        XCTAssertTrue(first.contains("page=2"))
        let second = try app.consoleGet("/console/audit?action=test.bulk&page=2", cookie: ada).text
        XCTAssertTrue(second.contains("item 51<") && second.contains("item 60<") && !second.contains("item 50<"))
    }

    func testServiceRoleWritesAreAuditedAndTheLogExportsAsCSV() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let key = app.application.context.configuration.supabaseServiceRoleKey
        let headers = [
            "apikey": key, "Authorization": "Bearer \(key)", "Content-Type": "application/json",
            "Prefer": "return=representation", "Accept": "application/vnd.pgrst.object+json",
            "User-Agent": "OwnerTool/1",
        ]
        let added = try app.client.send(
            "POST", "/rest/v1/quotes", headers: headers,
            body: Array(#"{"text":"=HYPERLINK(\"x\")","author":"Tool","category":"humor"}"#.utf8))
        XCTAssertEqual(added.status, 201, added.text)
        let id = try XCTUnwrap(try added.jsonObject()["id"] as? String)
        XCTAssertEqual(
            try app.client.send("DELETE", "/rest/v1/quotes?id=eq.\(id)", headers: headers, body: nil).status, 200)
        let rows = try await app.withConnection { connection in
            try connection.query(
                "SELECT owner_email, action, target, client_address, user_agent FROM console_audit WHERE action LIKE 'rest.%' ORDER BY id"
            ).map {
                [
                    try $0.decode("owner_email", as: String.self), try $0.decode("action"), try $0.decode("target"),
                    try $0.decode("client_address"), try $0.decode("user_agent"),
                ]
            }
        }
        XCTAssertEqual(
            rows,
            [
                ["service role key (/rest/v1)", "rest.quotes.insert", id, "127.0.0.1", "OwnerTool/1"],
                ["service role key (/rest/v1)", "rest.quotes.delete", id, "127.0.0.1", "OwnerTool/1"],
            ])

        let cookie = try await app.consoleOwner()
        let page = try app.consoleGet("/console/audit?action=rest.quotes.insert", cookie: cookie).text
        XCTAssertTrue(page.contains("OwnerTool/1") && page.contains("/console/audit.csv?action=rest.quotes.insert"))
        let csv = try app.consoleGet("/console/audit.csv?action=rest.quotes.insert", cookie: cookie)
        XCTAssertEqual(csv.status, 200)
        XCTAssertEqual(csv.header("Content-Type"), "text/csv; charset=utf-8")
        XCTAssertTrue(csv.header("Content-Disposition")?.hasPrefix("attachment") == true)
        let lines = csv.text.split(separator: "\r\n")
        XCTAssertEqual(lines.count, 2, csv.text)
        XCTAssertTrue(lines[0].hasPrefix("\"at\",\"owner\",\"action\""))
        XCTAssertTrue(lines[1].contains("\"rest.quotes.insert\""), String(lines[1]))
        XCTAssertEqual(try app.consoleGet("/console/audit.csv").status, 303, "owners only")
    }
}
