import Foundation
import TestSupport
import XCTest

/// Exports are streamed a page at a time (keyset pages of `QuoteExport.pageSize`), so a large one holds every row
/// exactly once, in order, across the pages' seams, without a cap.
final class ConsoleLargeExportTests: XCTestCase {
    func testTwentyThousandQuotesExportWholeInOrderAsCSVAndJSON() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        // Ties in created_at (1,000 quotes per second) test the id tie-breaker at the seams.
        // In batches: the search index's upkeep makes one statement of 20,000 rows pass the statement timeout.
        for batch in 0..<20 {
            try await app.withConnection { connection in
                try connection.query(
                    """
                    INSERT INTO quotes (text, author, category, created_at)
                    SELECT 'Exported quote ' || n, 'Author ' || (n % 97),
                           (ARRAY['motivation', 'love', 'success', 'wisdom', 'humor'])[1 + n % 5],
                           timestamptz '2026-01-01' + (n / 1000) * interval '1 second'
                    FROM generate_series(\(batch * 1000 + 1), \(batch * 1000 + 1000)) AS n
                    """)
            }
        }

        let csv = try app.consoleGet("/console/quotes/export.csv", cookie: cookie)
        XCTAssertEqual(csv.status, 200)
        XCTAssertEqual(csv.header("Transfer-Encoding"), "chunked", "streamed, not built whole")
        let lines = csv.text.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
        XCTAssertEqual(lines.count, 20000)
        let ids = lines.map { String($0.split(separator: ",")[0]) }
        XCTAssertEqual(Set(ids).count, 20000, "no row twice")
        let created = lines.map { String($0.split(separator: ",")[4]) }
        XCTAssertEqual(created, created.sorted(by: >), "newest first")

        let json = try app.consoleGet("/console/quotes/export.json?sort=author&category=love", cookie: cookie)
        XCTAssertEqual(json.status, 200)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.body)) as? [[String: Any]])
        XCTAssertEqual(rows.count, 4000)
        XCTAssertEqual(Set(rows.compactMap { $0["id"] as? String }).count, 4000)
        XCTAssertTrue(rows.allSatisfy { $0["category"] as? String == "love" })
        let authors = rows.compactMap { ($0["author"] as? String)?.lowercased() }
        XCTAssertEqual(authors, authors.sorted(), "in the author order")

        let byFavorites = try app.consoleGet("/console/quotes/export.csv?sort=favorites&dir=desc", cookie: cookie)
        XCTAssertEqual(byFavorites.text.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count, 20001)
    }

    func testTheWholeAuditLogExportsAcrossPages() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO console_audit (owner_email, action, target, at)
                SELECT 'bulk@example.com', 'test.bulk', 'item ' || n, timestamptz '2026-01-01' + (n / 100) * interval '1 ms'
                FROM generate_series(1, 2500) AS n
                """)
        }
        let csv = try app.consoleGet("/console/audit.csv?action=test.bulk", cookie: cookie)
        XCTAssertEqual(csv.status, 200)
        let targets = csv.text.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
            .map { String($0.split(separator: ",")[3]) }
        XCTAssertEqual(targets.count, 2500)
        XCTAssertEqual(Set(targets).count, 2500, "every row once, across the pages' seams")
        XCTAssertEqual(targets.first, "\"item 2500\"", "newest first")
    }
}
