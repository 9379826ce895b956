import Foundation
import PGClient
import TestSupport
import XCTest

/// The console's overview: charts drawn as inline SVG the strict CSP allows (no script, no style attributes).
final class ConsoleOverviewTests: XCTestCase {
    func testTheOverviewDrawsItsChartsAsInlineSVG() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let signUp = try app.client.send("POST", "/v1/auth/signup", json: ["email": "new@example.com",
                                                                           "password": "correct horse"])
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
        XCTAssertFalse(html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http"),
                       "nothing fetched from elsewhere")
        let today = String(PGDate(Date()).description.suffix(5))
        XCTAssertTrue(html.contains("<title>\(today): 1</title>"), "today's sign-up is charted")
        XCTAssertTrue(html.contains("<title>7 days: 1</title>") && html.contains("<title>30 days: 1</title>"),
                      "the new user is active")
        XCTAssertTrue(html.contains("<polyline"), "requests are charted")
        XCTAssertTrue(html.contains("Database size"))
        XCTAssertTrue(html.contains("MiB"), "the database's size")
        XCTAssertTrue(html.contains("none yet"), "no backup in tests")
        XCTAssertNotNil(page.header("Content-Security-Policy"))
    }
}
