import Foundation
import PGClient
import TestSupport
import XCTest

/// `GET /v1/qotd` and `/v1/qotd/range`.
final class QuoteOfTheDayTests: XCTestCase {
    private func quoteID(_ response: HTTPTestResponse) throws -> String {
        try XCTUnwrap((try response.jsonObject()["quote"] as? [String: Any])?["id"] as? String)
    }

    func testSameDateSameQuoteAfterMoreQuotesAndARestart() async throws {
        let app = try await TestApp.start()
        try await app.insertQuotes((0..<20).map { "Daily \($0)" })
        let first = try app.client.get("/v1/qotd?date=2026-03-01")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(try first.jsonObject()["date"] as? String, "2026-03-01")
        XCTAssertEqual(first.header("Cache-Control"), "public, max-age=31536000, immutable")
        try await app.insertQuotes((0..<20).map { "Later \($0)" })
        let again = try app.client.get("/v1/qotd?date=2026-03-01")
        XCTAssertEqual(try quoteID(again), try quoteID(first))
        let url = app.databaseURL
        await app.stop()
        let restarted = try await startTestApp(databaseURL: url)
        XCTAssertEqual(try quoteID(restarted.client.get("/v1/qotd?date=2026-03-01")), try quoteID(first))
    }

    /// A day's quote is kept as it was shown whoever writes the tables (the rule is the tables' own, migration
    /// 0020): the day's row and the quote's words refuse changes, other quotes and new dates do not.
    func testAShownQuoteIsKeptWhateverWritesIt() async throws {
        let app = try await TestApp.start()
        try await app.insertQuotes(["One quote", "Another quote"])
        let shown = try quoteID(app.client.get("/v1/qotd?date=2026-04-01"))
        let statements: [PGQuery] = [
            "UPDATE quotes SET text = 'Rewritten' WHERE id = \(UUID(uuidString: shown)!)",
            "UPDATE quote_of_day SET date = '2026-04-02' WHERE date = '2026-04-01'",
            "DELETE FROM quote_of_day WHERE date = '2026-04-01'",
        ]
        for statement in statements {
            do {
                _ = try await app.withConnection { try $0.query(statement) }
                XCTFail("\(statement.sql) was not refused")
            } catch let error as PGError {
                XCTAssertEqual(error.sqlState?.rawValue, "55000")
            }
        }
        let other = try await app.withConnection {
            try $0.query("UPDATE quotes SET category = 'humor' WHERE id <> \(UUID(uuidString: shown)!)").affectedRows
        }
        XCTAssertEqual(other, 1)
        XCTAssertEqual(try quoteID(app.client.get("/v1/qotd?date=2026-04-01")), shown)
        XCTAssertEqual(try app.client.get("/v1/qotd?date=2026-04-03").status, 200)
        await app.stop()
    }

    func testFiftyConcurrentFirstRequestsAgree() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes((0..<100).map { "Concurrent \($0)" })
        let port = app.application.port
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let response = try HTTPTestClient(port: port).get("/v1/qotd?date=2027-07-04")
                    return try XCTUnwrap((try response.jsonObject()["quote"] as? [String: Any])?["id"] as? String)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        XCTAssertEqual(ids.count, 1)
        let stored = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM quote_of_day")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(stored, 1)
    }

    func testNoRepeatWithinAYear() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes((0..<400).map { "Year quote \($0)" })
        var chosen: [String] = []
        let start = PGDate(string: "2025-01-01")!
        // Whole year in ranges of 31, plus a second pass to be sure nothing changed.
        var offset = 0
        while offset < 365 {
            let from = PGDate(start.date.addingTimeInterval(Double(offset) * 86_400))
            let to = PGDate(start.date.addingTimeInterval(Double(min(offset + 30, 364)) * 86_400))
            let response = try app.client.get("/v1/qotd/range?from=\(from)&to=\(to)")
            XCTAssertEqual(response.status, 200)
            let items = try response.items()
            XCTAssertEqual(items.first?["date"] as? String, from.description)
            XCTAssertEqual(items.last?["date"] as? String, to.description)
            chosen += items.map { ($0["quote"] as! [String: Any])["id"] as! String }
            offset += 31
        }
        XCTAssertEqual(chosen.count, 365)
        XCTAssertEqual(Set(chosen).count, 365, "no quote twice within 365 consecutive days")
        let single = try app.client.get("/v1/qotd?date=2025-06-15")
        XCTAssertEqual(try quoteID(single), chosen[165])
    }

    func testDefaultDateIsTodayInTheZoneAndCachedUntilMidnight() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(["Only quote"])
        for zone in ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"] {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: zone)!
            func today() -> String {
                let parts = calendar.dateComponents([.year, .month, .day], from: Date())
                return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            }
            // Read before and after the request: midnight in the zone may fall in between.
            let before = today()
            let response = try app.client.get("/v1/qotd?tz=\(zone)")
            let days = [before, today()]
            XCTAssertEqual(response.status, 200)
            let served = try response.jsonObject()["date"] as? String
            XCTAssertTrue(served.map(days.contains) ?? false, "\(zone): \(served ?? "none") is not \(days)")
            let cacheControl = try XCTUnwrap(response.header("Cache-Control"))
            let maxAge = Int(cacheControl.replacingOccurrences(of: "public, max-age=", with: "")) ?? -1
            XCTAssertTrue((1...86_400).contains(maxAge), cacheControl)
        }
    }

    func testInvalidDatesZonesAndRangesAre422() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(["q"])
        let tooFar = PGDate(Date().addingTimeInterval(400 * 86_400))
        for query in [
            "date=1999-12-31", "date=2026-13-01", "date=26-01-01", "date=\(tooFar)", "tz=Mars/Olympus",
            "date=2026-02-30",
        ] {
            let response = try app.client.get("/v1/qotd?\(query)")
            XCTAssertEqual(response.status, 422, query)
        }
        XCTAssertEqual(try app.client.get("/v1/qotd?date=2000-01-01").status, 200)
        for query in [
            "from=2026-01-10&to=2026-01-01", "from=2026-01-01&to=2026-02-01", "from=2026-01-01", "to=2026-01-01",
            "from=1999-12-31&to=2000-01-02", "from=bad&to=2026-01-01",
        ] {
            XCTAssertEqual(try app.client.get("/v1/qotd/range?\(query)").status, 422, query)
        }
        XCTAssertEqual(try app.client.get("/v1/qotd/range?from=2026-01-01&to=2026-01-31").items().count, 31)
    }
}
