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
}
