import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// The console's quote of the day: pins of coming days are what `/v1/qotd` serves; frozen days refuse changes.
final class ConsoleQuoteOfTheDayTests: XCTestCase {
    private func quoteID(_ response: HTTPTestResponse) throws -> String {
        try XCTUnwrap((try response.jsonObject()["quote"] as? [String: Any])?["id"] as? String)
    }

    private func auditCount(_ app: TestApp, _ action: String, _ target: String) async throws -> Int {
        try await app.withConnection { connection in
            try connection.query(
                """
                SELECT count(*)::int8 AS n FROM console_audit WHERE action = \(action) AND target = \(target)
                """)[0].decode("n", as: Int.self)
        }
    }

    func testAPinnedComingDayIsServedByQotdAndUnpinningGivesTheDayBackToItsSeed() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let ids = try await app.insertQuotes((0..<20).map { "Daily pick \($0)" })
        let cookie = try await app.consoleOwner()
        let day = QuoteOfTheDay.lastFrozenDate().adding(days: 2).description
        // Asked for ahead of time (a widget's prefetch): the seed's choice is stored, briefly cacheable.
        let ahead = try app.client.get("/v1/qotd?date=\(day)")
        XCTAssertEqual(ahead.status, 200)
        XCTAssertEqual(ahead.header("Cache-Control"), "public, max-age=60")
        let seeded = try quoteID(ahead)
        let index = try XCTUnwrap((10..<20).first { ids[$0].uuidString.lowercased() != seeded })
        let pick = ids[index].uuidString.lowercased()

        let search = try app.consoleGet("/console/qotd/\(day)?q=pick+\(index)", cookie: cookie)
        XCTAssertEqual(search.status, 200)
        XCTAssertTrue(search.text.contains("Pin this"), "search results offer a pin")
        XCTAssertTrue(search.text.contains(pick), "the match can be picked")
        let pinned = try app.consoleSubmit(
            "/console/qotd/\(day)/pin", cookie: cookie, fields: ["quote_id": pick],
            from: "/console/qotd/\(day)")
        XCTAssertEqual(pinned.status, 303, pinned.text)
        XCTAssertEqual(try quoteID(app.client.get("/v1/qotd?date=\(day)")), pick, "the pin is served")
        let range = try app.client.get("/v1/qotd/range?from=\(day)&to=\(day)")
        XCTAssertEqual(range.header("Cache-Control"), "public, max-age=60", "a range that may change is not immutable")
        XCTAssertEqual(
            try app.client.get("/v1/qotd/range?from=2026-01-01&to=2026-01-02").header("Cache-Control"),
            "public, max-age=31536000, immutable", "a frozen range is")
        XCTAssertEqual(
            ((try range.jsonObject()["items"] as? [[String: Any]])?.first?["quote"] as? [String: Any])?["id"]
                as? String, pick)
        let audited1 = try await auditCount(app, "qotd.pin", day)
        XCTAssertEqual(audited1, 1)
        let calendar = try app.consoleGet("/console/qotd?month=\(day.prefix(7))", cookie: cookie)
        XCTAssertEqual(calendar.status, 200)
        XCTAssertTrue(calendar.text.contains("pinned"), calendar.text)
        XCTAssertTrue(calendar.text.contains("Daily pick"), "each day shows its quote")

        let unpinned = try app.consoleSubmit(
            "/console/qotd/\(day)/unpin", cookie: cookie, fields: [:],
            from: "/console/qotd/\(day)")
        XCTAssertEqual(unpinned.status, 303, unpinned.text)
        let audited2 = try await auditCount(app, "qotd.unpin", day)
        XCTAssertEqual(audited2, 1)
        let again = try app.client.get("/v1/qotd?date=\(day)")
        XCTAssertEqual(again.status, 200)
        let stillPinned = try await app.withConnection { connection in
            try connection.query("SELECT pinned FROM quote_of_day WHERE date = \(PGDate(string: day)!)")[0]
                .decode("pinned", as: Bool.self)
        }
        XCTAssertFalse(stillPinned, "the day is chosen again by its seed")
        let twice = try app.consoleSubmit(
            "/console/qotd/\(day)/unpin", cookie: cookie, fields: [:],
            from: "/console/qotd/\(day)")
        XCTAssertEqual(twice.status, 422)
        XCTAssertTrue(twice.text.contains("no pinned quote"), twice.text)
    }

    func testFrozenDaysAndBadPinsSaveNothing() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let ids = try await app.insertQuotes((0..<5).map { "Frozen \($0)" })
        let cookie = try await app.consoleOwner()
        let today = PGDate(Date())
        let frozenDays = [today.adding(days: -3), today, QuoteOfTheDay.lastFrozenDate()].map(\.description)
        for day in frozenDays {
            let before = try quoteID(app.client.get("/v1/qotd?date=\(day)"))
            let page = try app.consoleGet("/console/qotd/\(day)", cookie: cookie)
            XCTAssertTrue(page.text.contains("frozen"), page.text)
            XCTAssertFalse(page.text.contains("action=\"/console/qotd/\(day)/pin\""), "no pin form on a frozen day")
            let other = try XCTUnwrap(ids.map { $0.uuidString.lowercased() }.first { $0 != before })
            let refused = try app.consoleSubmit(
                "/console/qotd/\(day)/pin", cookie: cookie,
                fields: ["quote_id": other], from: "/console/qotd/\(day)")
            XCTAssertEqual(refused.status, 422, day)
            XCTAssertTrue(refused.text.contains("frozen") && refused.text.contains("Nothing was saved"), refused.text)
            XCTAssertEqual(try quoteID(app.client.get("/v1/qotd?date=\(day)")), before, "\(day) unchanged")
            XCTAssertEqual(
                try app.consoleSubmit(
                    "/console/qotd/\(day)/unpin", cookie: cookie, fields: [:],
                    from: "/console/qotd/\(day)"
                ).status, 422)
        }
        let coming = QuoteOfTheDay.lastFrozenDate().adding(days: 2).description
        for (value, message) in [("not-an-id", "Enter the id"), (UUID().uuidString, "no quote with this id")] {
            let refused = try app.consoleSubmit(
                "/console/qotd/\(coming)/pin", cookie: cookie,
                fields: ["quote_id": value], from: "/console/qotd/\(coming)")
            XCTAssertEqual(refused.status, 422)
            XCTAssertTrue(refused.text.contains(message), refused.text)
        }
        let tooFar = today.adding(days: QuoteOfTheDay.maximumDaysAhead + 2).description
        XCTAssertEqual(
            try app.consoleSubmit(
                "/console/qotd/\(tooFar)/pin", cookie: cookie,
                fields: ["quote_id": ids[0].uuidString], from: "/console"
            ).status, 422)
        let withoutToken = try app.consolePost(
            "/console/qotd/\(coming)/pin", cookie: cookie,
            fields: ["quote_id": ids[0].uuidString])
        XCTAssertEqual(withoutToken.status, 403)
        let stored = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM quote_of_day WHERE pinned")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(stored, 0, "nothing was pinned")
        let audited = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_audit WHERE action LIKE 'qotd.%'")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(audited, 0)
    }

    func testAPinKeepsTheContractsNoRepeatWithin365Days() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let ids = try await app.insertQuotes((0..<365).map { "Year quote \($0)" }).map { $0.uuidString.lowercased() }
        let cookie = try await app.consoleOwner()
        let yesterday = PGDate(Date()).adding(days: -1).description
        let used = try quoteID(app.client.get("/v1/qotd?date=\(yesterday)"))
        let day = QuoteOfTheDay.lastFrozenDate().adding(days: 3).description
        let refused = try app.consoleSubmit(
            "/console/qotd/\(day)/pin", cookie: cookie, fields: ["quote_id": used],
            from: "/console/qotd/\(day)")
        XCTAssertEqual(refused.status, 422)
        XCTAssertTrue(refused.text.contains("quote of the day on \(yesterday)"), refused.text)
        XCTAssertNotEqual(try quoteID(app.client.get("/v1/qotd?date=\(day)")), used, "nothing was pinned")
        let fresh = try XCTUnwrap(ids.first { $0 != used })
        let pinned = try app.consoleSubmit(
            "/console/qotd/\(day)/pin", cookie: cookie, fields: ["quote_id": fresh],
            from: "/console/qotd/\(day)")
        XCTAssertEqual(pinned.status, 303, pinned.text)
        XCTAssertEqual(try quoteID(app.client.get("/v1/qotd?date=\(day)")), fresh)
    }
}
