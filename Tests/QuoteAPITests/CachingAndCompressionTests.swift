import Foundation
import TestSupport
import XCTest

/// The public quote answers over HTTP: ETags and 304s (also across a change), gzip read back by zlib.
final class CachingAndCompressionTests: XCTestCase {
    private let appClientEncodings = ["Accept-Encoding": "deflate, gzip, br, zstd"]

    func testPublicAnswersCarryETagsAnd304WithoutABody() async throws {
        let app = try await startTestApp()
        let ids = try await app.insertQuotes((0..<30).map { "Quote number \($0) about patience" })
        let paths = [
            "/v1/quotes", "/v1/quotes?page=2&page_size=10", "/v1/quotes?category=love", "/v1/quotes/search?q=patience",
            "/v1/quotes/search?q=number&type=keyword&page=2&page_size=5",
            "/v1/quotes/\(ids[3].uuidString.lowercased())",
            "/v1/categories", "/v1/qotd?date=2026-01-01", "/v1/qotd", "/v1/qotd/range?from=2026-01-01&to=2026-01-03",
        ]
        for path in paths {
            let first = try app.client.get(path)
            XCTAssertEqual(first.status, 200, path)
            let etag = try XCTUnwrap(first.header("ETag"), path)
            let again = try app.client.get(path, headers: ["If-None-Match": etag])
            XCTAssertEqual(again.status, 304, path)
            XCTAssertEqual(again.body, [], path)
            XCTAssertEqual(again.header("ETag"), etag, path)
            XCTAssertEqual(try app.client.get(path, headers: ["If-None-Match": "\"stale\""]).status, 200, path)
        }
        // A cursor page is public too.
        let cursor = try XCTUnwrap(try app.client.get("/v1/quotes?page_size=5").jsonObject()["next_cursor"] as? String)
        let byCursor = try app.client.get("/v1/quotes?page_size=5&cursor=\(cursor)")
        XCTAssertEqual(
            try app.client.get(
                "/v1/quotes?page_size=5&cursor=\(cursor)",
                headers: ["If-None-Match": try XCTUnwrap(byCursor.header("ETag"))]
            ).status, 304)
        // Errors and the private routes carry none.
        XCTAssertNil(try app.client.get("/v1/quotes?page=0").header("ETag"))
    }

    func testANewQuoteChangesTheETagsOfTheListsItAppearsIn() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes((0..<5).map { "Steady quote \($0)" }, category: "wisdom")
        let paths = ["/v1/quotes", "/v1/quotes?category=humor", "/v1/quotes/search?q=quote", "/v1/categories"]
        var before: [String: String] = [:]
        for path in paths {
            let response = try app.client.get(path)
            before[path] = try XCTUnwrap(response.header("ETag"))
            XCTAssertEqual(try app.client.get(path, headers: ["If-None-Match": before[path]!]).status, 304, path)
        }
        try await app.insertQuotes(["A fresh quote"], category: "humor")
        for path in paths {
            let response = try app.client.get(path, headers: ["If-None-Match": before[path]!])
            XCTAssertEqual(response.status, 200, "\(path): changed, so the old tag gets the new answer")
            XCTAssertNotEqual(response.header("ETag"), before[path], path)
            XCTAssertTrue(response.text.contains("A fresh quote") || path == "/v1/categories", path)
        }
        // A list the new quote is not in may keep its tag (it is the same answer).
        let wisdom = try app.client.get("/v1/quotes?category=wisdom")
        XCTAssertEqual(
            try app.client.get(
                "/v1/quotes?category=wisdom", headers: ["If-None-Match": try XCTUnwrap(wisdom.header("ETag"))]
            ).status, 304)
        // Changed by plain SQL (another instance, an import): seen at once, without a restart.
        let listTag = try XCTUnwrap(try app.client.get("/v1/quotes").header("ETag"))
        try await app.withConnection { connection in
            _ = try connection.query("UPDATE quotes SET text = 'Edited by SQL' WHERE text = 'A fresh quote'")
        }
        let edited = try app.client.get("/v1/quotes", headers: ["If-None-Match": listTag])
        XCTAssertEqual(edited.status, 200)
        XCTAssertTrue(edited.text.contains("Edited by SQL"))
        // A cached search answer is dropped the same way.
        let searchTag = try XCTUnwrap(try app.client.get("/v1/quotes/search?q=sql").header("ETag"))
        _ = try app.client.get("/v1/quotes/search?q=sql")  // answered from the cache
        try await app.withConnection { connection in
            _ = try connection.query("UPDATE quotes SET text = 'Edited again by SQL' WHERE text = 'Edited by SQL'")
        }
        let searched = try app.client.get("/v1/quotes/search?q=sql", headers: ["If-None-Match": searchTag])
        XCTAssertEqual(searched.status, 200)
        XCTAssertTrue(searched.text.contains("Edited again by SQL"))
    }

    func testASearchAskedAgainGetsTheSameAnswerWhateverItsSpacing() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes((0..<25).map { "Patience number \($0)" }, category: "wisdom")
        let first = try app.client.get("/v1/quotes/search?q=patience&page=2&page_size=10")
        XCTAssertEqual(first.status, 200)
        let again = try app.client.get("/v1/quotes/search?q=%20patience%20&page=2&page_size=10")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.text, first.text)
        XCTAssertEqual(again.header("ETag"), first.header("ETag"))
        // Another page, size, field or category is another answer.
        XCTAssertNotEqual(try app.client.get("/v1/quotes/search?q=patience&page=1&page_size=10").text, first.text)
        XCTAssertEqual(
            try app.client.get("/v1/quotes/search?q=patience&type=author&page=2&page_size=10").jsonObject()["total"]
                as? Int, 0)
        XCTAssertEqual(
            try app.client.get("/v1/quotes/search?q=patience&category=love").jsonObject()["total"] as? Int, 0)
    }

    func testAPageOfTwentyIsGzippedForTheAppsClientAndReadsBackTheSame() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(
            (0..<40).map { "A reasonably long quote, number \($0), about courage and patience in hard times" })
        for path in [
            "/v1/quotes?page_size=20", "/v1/quotes?page=2&page_size=20", "/v1/quotes/search?q=courage&page_size=20",
        ] {
            let plain = try app.client.get(path)
            XCTAssertNil(plain.header("Content-Encoding"), path)
            XCTAssertEqual(plain.header("Vary"), "Accept-Encoding", path)
            let compressed = try app.client.get(path, headers: appClientEncodings)
            XCTAssertEqual(compressed.status, 200, path)
            XCTAssertEqual(compressed.header("Content-Encoding"), "gzip", path)
            XCTAssertEqual(compressed.header("Vary"), "Accept-Encoding", path)
            XCTAssertLessThan(compressed.body.count, plain.body.count / 2, path)
            let inflated = try XCTUnwrap(gunzip(compressed.body), path)
            XCTAssertEqual(inflated, plain.body, "\(path): zlib reads back the same JSON")
            // Asked again (a cached page: compressed once), the same bytes.
            XCTAssertEqual(try app.client.get(path, headers: appClientEncodings).body, compressed.body, path)
        }
        // A single quote is under 1 KB: sent as it is, still Vary.
        let one = try app.client.get("/v1/quotes?page_size=1", headers: appClientEncodings)
        XCTAssertNil(one.header("Content-Encoding"))
        XCTAssertEqual(one.header("Vary"), "Accept-Encoding")
    }
}
