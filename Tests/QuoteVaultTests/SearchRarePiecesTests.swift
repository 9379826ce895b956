import Foundation
import PGClient
import TestSupport
import XCTest

/// Migration 0065: a query of several words whose words are each in few quotes of an analyzed table is found. The
/// quotes holding both were estimated as (quotes of one) × (quotes of the other) / (rows), which rounded to none.
final class SearchRarePiecesTests: XCTestCase {
    private func start() async throws -> TestApp {
        let app = try await TestApp.start()
        try await app.insertQuotes((1...40).map { "Filler saying number \($0)" }, author: "Common Author")
        try await app.insertQuotes(["The lantern brass glowed all night"], author: "Zelda Quorrin")
        try await app.insertQuotes(["Another lantern, of brass"], author: "Quorrin Zelda")
        // The estimate reads the table's row count as ANALYZE left it (42 here: 1 × 1 / 42 rounded to 0).
        try await app.withConnection { connection in _ = try connection.query("ANALYZE quotes") }
        return app
    }

    private func found(_ app: TestApp, _ query: String, type: String) throws -> [String] {
        let response = try app.search(query, type: type, extra: "&page_size=100")
        XCTAssertEqual(response.status, 200)
        let items = try response.items()
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, items.count, query)
        return items.map { ($0[type == "author" ? "author" : "text"] as! String) }
    }

    func testTwoRareWordsAreFound() async throws {
        let app = try await start()
        XCTAssertEqual(try found(app, "lantern brass", type: "keyword"), ["The lantern brass glowed all night"])
        XCTAssertEqual(try found(app, "Lantern Brass glowed", type: "keyword"), ["The lantern brass glowed all night"])
        XCTAssertEqual(try found(app, "brass lantern", type: "keyword"), [])
        await app.stop()
    }

    func testARareAuthorsFullNameIsFound() async throws {
        let app = try await start()
        XCTAssertEqual(try found(app, "zelda quorrin", type: "author"), ["Zelda Quorrin"])
        XCTAssertEqual(try found(app, "Quorrin Zelda", type: "author"), ["Quorrin Zelda"])
        XCTAssertEqual(try found(app, "zelda quo", type: "author"), ["Zelda Quorrin"])
        await app.stop()
    }
}
