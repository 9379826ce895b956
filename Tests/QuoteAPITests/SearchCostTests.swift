import HTTPServer
import QuoteAPI
import TestSupport
import XCTest

/// A search's cost class is a guess from the answer cache: expensive until its answer is filed at the quotes'
/// newest version, then a cheap read (one small read), and expensive again once a quote changes.
final class SearchCostTests: XCTestCase {
    func testASearchIsExpensiveUntilItsAnswerIsCachedAndAgainAfterAChange() async throws {
        let app = try await startTestApp()
        _ = try await app.insertQuotes(["Cost of a cached search", "Another cached search"])
        let route = try XCTUnwrap(app.application.server.router.routes.first { $0.pattern == "/v1/quotes/search" })
        let query = [(name: "q", value: "cached"), (name: "page_size", value: "10")]
        let request = Request(method: .get, path: "/v1/quotes/search", query: query)
        XCTAssertEqual(route.cost.of(request), .expensive, "nothing cached yet")

        XCTAssertEqual(try app.client.get("/v1/quotes/search?q=cached&page_size=10").status, 200)
        XCTAssertEqual(route.cost.of(request), .cheapRead, "its answer is cached")
        let other = Request(method: .get, path: "/v1/quotes/search", query: [(name: "q", value: "another")])
        XCTAssertEqual(route.cost.of(other), .expensive, "another search is not")
        let invalid = Request(method: .get, path: "/v1/quotes/search", query: [(name: "type", value: "x")])
        XCTAssertEqual(route.cost.of(invalid), .cheapRead, "refused before any SQL")

        // A quote changes: the next search reads the new version and the cached answer is stale.
        _ = try await app.insertQuotes(["A third cached search"])
        XCTAssertEqual(try app.client.get("/v1/quotes/search?q=another&page_size=10").status, 200)
        XCTAssertEqual(route.cost.of(request), .expensive, "cached at an older version")
    }
}
