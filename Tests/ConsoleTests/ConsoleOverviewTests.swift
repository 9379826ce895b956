import Foundation
import HTTPServer
import PGClient
import QuoteAPI
import TestSupport
import XCTest

/// The console's overview: charts drawn as inline SVG the strict CSP allows (no script, no style attributes).
final class ConsoleOverviewTests: XCTestCase {
    func testTheOverviewDrawsItsChartsAsInlineSVG() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let signUpDay = String(PGDate(Date()).description.suffix(5))
        let signUp = try app.client.send(
            "POST", "/v1/auth/signup",
            json: [
                "email": "new@example.com",
                "password": "correct horse",
            ])
        XCTAssertEqual(signUp.status, 201)
        for _ in 0..<5 { XCTAssertEqual(try app.client.get("/v1/categories").status, 200) }
        let cookie = try await app.consoleOwner()
        let page = try app.consoleGet("/console", cookie: cookie)
        XCTAssertEqual(page.status, 200)
        let html = page.text
        XCTAssertEqual(html.components(separatedBy: "<svg viewBox").count - 1, 4, "four charts")
        for forbidden in ["style=", "<script", "<style"] {
            XCTAssertFalse(html.contains(forbidden), "no \(forbidden)")
        }
        XCTAssertFalse(
            html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http"),
            "nothing fetched from elsewhere")
        // On the day it happened, also when midnight passed since.
        let today = String(PGDate(Date()).description.suffix(5))
        XCTAssertTrue(
            [signUpDay, today].contains { html.contains("<title>\($0): 1</title>") }, "today's sign-up is charted")
        XCTAssertTrue(
            html.contains("<title>7 days: 1</title>") && html.contains("<title>30 days: 1</title>"),
            "the new user is active")
        XCTAssertTrue(html.contains("<polyline"), "requests are charted")
        XCTAssertTrue(html.contains("Database size"))
        XCTAssertTrue(html.contains("MiB"), "the database's size")
        XCTAssertTrue(html.contains("none yet"), "no backup in tests")
        XCTAssertNotNil(page.header("Content-Security-Policy"))

        app.application.context.metrics.backups.update {
            $0.lastSuccess = Date(timeIntervalSince1970: 1_795_000_000)
            $0.lastDatabaseBytes = 3 * 1024 * 1024
        }
        let backedUp = try app.consoleGet("/console", cookie: cookie).text
        XCTAssertTrue(backedUp.contains("2026-11-18 11:06 UTC"), "the last backup's end")
        XCTAssertTrue(backedUp.contains("3.0 MiB database backed up"), "and the size of the database it holds")
    }

    func testTrafficHistoryKeepsAnHourPerMinuteWithPercentiles() {
        let history = TrafficHistory()
        let now = Date(timeIntervalSince1970: 1_800_000_030)
        for _ in 0..<98 { history.record(status: 200, duration: .milliseconds(1), now: now) }
        for _ in 0..<2 { history.record(status: 503, duration: .seconds(1), now: now) }
        history.record(status: 200, duration: .milliseconds(20), now: now.addingTimeInterval(-5 * 60))
        history.record(status: 200, duration: .milliseconds(20), now: now.addingTimeInterval(-61 * 60))
        let minutes = history.recent(now: now)
        XCTAssertEqual(minutes.count, 60)
        let current = minutes.last
        XCTAssertEqual(current?.requests, 100)
        XCTAssertEqual(current?.errors, 2, "the 5xx answers")
        XCTAssertEqual(current?.start, Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertTrue((1.0...1.3).contains(current?.p50Milliseconds ?? 0), "p50 within 30 % of 1 ms")
        XCTAssertTrue((1000.0...1300.0).contains(current?.p99Milliseconds ?? 0), "p99 within 30 % of 1 s")
        XCTAssertEqual(minutes[54].requests, 1, "five minutes ago")
        XCTAssertEqual(minutes.map(\.requests).reduce(0, +), 101, "an hour ago is forgotten")
        XCTAssertNil(minutes[0].p50Milliseconds, "an idle minute has no latency")
    }
}
