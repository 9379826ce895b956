import Foundation
import PGClient
@testable import QuoteVault
import TestSupport
import XCTest

/// How a date's quote is chosen: a walk over the quotes' ids from a point the date gives, which stops at the first
/// quote not shown within a year, whatever the size of the corpus.
final class QuoteOfTheDayChoiceTests: XCTestCase {
    private func quoteID(_ app: TestApp, _ date: String) throws -> UUID {
        let response = try app.client.get("/v1/qotd?date=\(date)")
        XCTAssertEqual(response.status, 200)
        let id = try XCTUnwrap((try response.jsonObject()["quote"] as? [String: Any])?["id"] as? String)
        return try XCTUnwrap(UUID(uuidString: id))
    }

    /// The ids in order, as PostgreSQL orders uuids.
    private func idsInOrder(_ app: TestApp) async throws -> [UUID] {
        try await app.withConnection { connection in
            try connection.query("SELECT id FROM quotes ORDER BY id").map { try $0.decode("id", as: UUID.self) }
        }
    }

    private func insertQuotes(_ app: TestApp, _ count: Int) async throws {
        _ = try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quotes (text, author, category)
                SELECT 'Choice quote ' || n, 'Choice Author', 'wisdom' FROM generate_series(1, \(count)) AS n
                """)
        }
    }

    private func show(_ app: TestApp, _ quote: UUID, on date: PGDate) async throws {
        _ = try await app.withConnection { connection in
            try connection.query("INSERT INTO quote_of_day (date, quote_id) VALUES (\(date), \(quote))")
        }
    }

    /// The first id at or after the date's point; after a quote shown the day before, the next; with every quote
    /// after the point shown nearby, the walk wraps around to the first id.
    func testTheWalkStartsAtTheDatesPointSkipsRecentQuotesAndWraps() async throws {
        let app = try await startTestApp()
        try await insertQuotes(app, 500)
        let ids = try await idsInOrder(app)
        // Lower-case hex of equal layout sorts as the bytes do, which is PostgreSQL's order of uuids.
        func pointText(_ date: PGDate) -> String { QuoteOfTheDay.startingPoint(date).uuidString.lowercased() }
        func successor(of point: UUID) -> Int? {
            ids.firstIndex { $0.uuidString.lowercased() >= point.uuidString.lowercased() }
        }

        let date = PGDate(string: "2026-05-05")!
        let expected = ids[successor(of: QuoteOfTheDay.startingPoint(date)) ?? 0]
        XCTAssertEqual(try quoteID(app, "2026-05-05"), expected)

        // The day before a later date shows that date's first candidate: the next id is chosen.
        let later = PGDate(string: "2026-08-10")!
        let first = successor(of: QuoteOfTheDay.startingPoint(later)) ?? 0
        try await show(app, ids[first], on: PGDate(string: "2026-08-09")!)
        let next = ids[(first + 1) % ids.count] == expected ? (first + 2) % ids.count : (first + 1) % ids.count
        XCTAssertEqual(try quoteID(app, "2026-08-10"), ids[next])

        // The date of these 200 whose point is highest: every quote after it shown on the days before; the first
        // id not shown nearby is chosen.
        let base = PGDate(string: "2024-01-01")!.date
        let dates = (0..<200).map { PGDate(base.addingTimeInterval(Double($0) * 86_400 * 2)) }
        let highest = try XCTUnwrap(dates.max { pointText($0) < pointText($1) })
        let after = successor(of: QuoteOfTheDay.startingPoint(highest)).map { Array(ids[$0...]) } ?? []
        XCTAssertLessThan(after.count, 20, "a point near the end of the ids")
        for (offset, quote) in after.enumerated() {
            try await show(app, quote, on: PGDate(highest.date.addingTimeInterval(-Double(offset + 1) * 86_400)))
        }
        let shownNearby = try await app.withConnection { connection in
            try connection.query(
                "SELECT quote_id FROM quote_of_day WHERE date BETWEEN \(highest)::date - 364 AND \(highest)::date + 364"
            ).map { try $0.decode("quote_id", as: UUID.self) }
        }
        XCTAssertEqual(try quoteID(app, highest.description), ids.first { !shownNearby.contains($0) })
        await app.stop()
    }

    /// EXPLAIN ANALYZE of the real statement on 5,000 quotes: the quotes it reads are the first allowed and the
    /// ones shown nearby before it, not the corpus.
    func testTheChoiceReadsAFewQuotesNotTheCorpus() async throws {
        let app = try await startTestApp()
        try await insertQuotes(app, 5_000)
        for day in 1...30 { _ = try quoteID(app, "2026-06-\(String(format: "%02d", day))") }
        let date = PGDate(string: "2026-07-01")!
        let plan = try await app.withConnection { connection in
            try connection.execute(unsafeSQL: "BEGIN")
            defer { try? connection.execute(unsafeSQL: "ROLLBACK") }
            return try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) \(QuoteOfTheDay.choice(for: date))")[0]
                .decode(at: 0, as: String.self)
        }
        let root = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(plan.utf8)) as? [[String: Any]])?.first)
        var quotesRead = 0
        var scans = 0
        func visit(_ node: [String: Any]) {
            if node["Relation Name"] as? String == "quotes" {
                scans += 1
                quotesRead += (node["Actual Rows"] as? Int ?? 0) * (node["Actual Loops"] as? Int ?? 1)
            }
            for child in node["Plans"] as? [[String: Any]] ?? [] { visit(child) }
        }
        visit(try XCTUnwrap(root["Plan"] as? [String: Any]))
        XCTAssertGreaterThan(scans, 0, plan)
        XCTAssertLessThanOrEqual(quotesRead, 31, plan)
        await app.stop()
    }
}
