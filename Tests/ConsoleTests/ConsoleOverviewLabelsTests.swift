import Foundation
import HTTPServer
import TestSupport
import XCTest

/// The overview's latency leaves out refusals answered after the deliberate refusal delay, and says so; its labels
/// say what they measure; its tables wrap text, never a date.
final class ConsoleOverviewLabelsTests: XCTestCase {
    func testDelayedRefusalsAreLeftOutOfTheLatencyPercentiles() {
        let history = TrafficHistory()
        let now = Date(timeIntervalSince1970: 1_800_000_030)
        for _ in 0..<95 { history.record(status: 200, duration: .milliseconds(2), now: now) }
        for _ in 0..<5 {
            history.record(status: 429, duration: .seconds(1), delayedRefusal: true, now: now)
        }
        let minute = history.recent(now: now).last!
        XCTAssertEqual(minute.requests, 100)
        XCTAssertEqual(minute.delayedRefusals, 5)
        XCTAssertLessThan(try XCTUnwrap(minute.p99Milliseconds), 3, "the delay is not the server's latency")
    }

    func testTheOverviewCountsTheDelayedRefusalsItLeftOut() async throws {
        let app = try await startTestApp { $0.httpRefusalDelay = 50 }
        let cookie = try await app.consoleOwner()
        let refused = try app.consolePost("/console/sign-in", fields: ["token": String(repeating: "a", count: 43)])
        XCTAssertEqual(refused.status / 100, 4)
        let page = try app.consoleGet("/console", cookie: cookie).text
        XCTAssertTrue(page.contains("without deliberately delayed refusals"), page)
        XCTAssertTrue(page.contains("leave out the 1 refusal(s)"), page)
    }

    func testDatesDoNotBreakAndWordsBreakOnlyWhenTheyMust() async throws {
        let app = try await startTestApp()
        let cookie = try await app.consoleOwner()
        _ = try await app.insertQuotes(["A quote"])
        let css = try app.consoleGet("/console/static/console.css").text
        XCTAssertFalse(css.contains("overflow-wrap: anywhere; }\n        form"), "td no longer breaks anywhere")
        XCTAssertTrue(css.contains("td { overflow-wrap: break-word; }"))
        XCTAssertTrue(css.contains(".date, .nowrap { white-space: nowrap; }"))
        let list = try app.consoleGet("/console/quotes", cookie: cookie).text
        XCTAssertTrue(list.contains("<td data-label=\"Added\" class=\"nowrap\"><time class=\"date\""), list)
    }
}
