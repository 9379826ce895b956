import Foundation
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// A day's page links to the days either side, and says what a pin or an unpin did, from fixed codes only.
final class ConsoleQuoteOfTheDayNavigationTests: XCTestCase {
    func testADayLinksToItsNeighboursAndConfirmsAPinAndAnUnpin() async throws {
        let app = try await startTestApp()
        let ids = try await app.insertQuotes(["Pin me", "Or me"])
        let cookie = try await app.consoleOwner()
        let day = QuoteOfTheDay.lastFrozenDate().adding(days: 2)
        let path = "/console/qotd/\(day.description)"
        let page = try app.consoleGet(path, cookie: cookie).text
        XCTAssertTrue(page.contains("href=\"/console/qotd/\(day.adding(days: -1).description)\" rel=\"prev\""), page)
        XCTAssertTrue(page.contains("href=\"/console/qotd/\(day.adding(days: 1).description)\" rel=\"next\""))
        let first = try app.consoleGet("/console/qotd/\(QuoteOfTheDay.firstDate.description)", cookie: cookie).text
        XCTAssertFalse(first.contains("rel=\"prev\""), "no day before the first served one")

        let pinned = try app.consoleSubmit(
            "\(path)/pin", cookie: cookie, fields: ["quote_id": ids[0].uuidString], from: path)
        XCTAssertEqual(pinned.header("Location"), "\(path)?done=pinned")
        XCTAssertTrue(try app.consoleGet("\(path)?done=pinned", cookie: cookie).text.contains("Pinned: this day"))
        let unpinned = try app.consoleSubmit("\(path)/unpin", cookie: cookie, fields: [:], from: path)
        XCTAssertEqual(unpinned.header("Location"), "\(path)?done=unpinned")
        XCTAssertTrue(try app.consoleGet("\(path)?done=unpinned", cookie: cookie).text.contains("Unpinned: this day"))
        let forged = try app.consoleGet("\(path)?done=Call%20555%20now", cookie: cookie).text
        XCTAssertFalse(forged.contains("Call 555") || forged.contains("role=\"status\""), "no text from the URL")
    }
}
