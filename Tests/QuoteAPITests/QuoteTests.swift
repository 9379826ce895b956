import Foundation
import PGClient
import TestSupport
import XCTest

/// `GET /v1/quotes`, `/v1/quotes/{id}` and `/v1/categories`.
final class QuoteTests: XCTestCase {
    func testPagesAreNewestFirstAndNeverOverlap() async throws {
        let app = try await startTestApp()
        let ids = try await app.insertQuotes((0..<45).map { "Quote number \($0)" })
        var seen: [String] = []
        for page in 1...3 {
            let response = try app.client.get("/v1/quotes?page=\(page)&page_size=20")
            XCTAssertEqual(response.status, 200)
            let body = try response.jsonObject()
            XCTAssertEqual(body["page"] as? Int, page)
            XCTAssertEqual(body["page_size"] as? Int, 20)
            XCTAssertEqual(body["total"] as? Int, 45)
            XCTAssertEqual(body["has_more"] as? Bool, page < 3)
            XCTAssertEqual(body["next_cursor"] is NSNull, page == 3)
            seen += try response.items().map { $0["id"] as! String }
        }
        XCTAssertEqual(seen, ids.reversed().map { $0.uuidString.lowercased() }, "all quotes, newest first, once each")
    }

    func testQuoteShape() async throws {
        let app = try await startTestApp()
        let id = try await app.insertQuotes(["Shape \"quoted\" \\ text"], category: "love")[0]
        let response = try app.client.get("/v1/quotes/\(id.uuidString.lowercased())")
        XCTAssertEqual(response.status, 200)
        let quote = try response.jsonObject()
        XCTAssertEqual(quote["id"] as? String, id.uuidString.lowercased())
        XCTAssertEqual(quote["text"] as? String, "Shape \"quoted\" \\ text")
        XCTAssertEqual(quote["author"] as? String, "Test Author")
        XCTAssertEqual(quote["category"] as? String, "love")
        let created = try XCTUnwrap(quote["created_at"] as? String)
        XCTAssertNotNil(
            created.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression), created)
    }

    /// A text that begins with U+FEFF (or has one right after an escaped character) reads back whole with
    /// `JSONSerialization` too, which drops one written raw there, from a page, a search and the quote itself.
    func testATextBeginningWithAByteOrderMarkReadsBackWhole() async throws {
        let app = try await startTestApp()
        let text = "\u{FEFF}Marked \"\u{FEFF}twice\" quote"
        let id = try await app.insertQuotes([text])[0]
        let page = try app.client.get("/v1/quotes")
        XCTAssertEqual(try page.items().first?["text"] as? String, text)
        let search = try app.client.get("/v1/quotes/search?q=marked")
        XCTAssertEqual(try search.items().first?["text"] as? String, text)
        let quote = try app.client.get("/v1/quotes/\(id.uuidString.lowercased())")
        XCTAssertEqual(try quote.jsonObject()["text"] as? String, text)
    }

    func testUnknownAndMalformedIdsAre404() async throws {
        let app = try await startTestApp()
        XCTAssertEqual(try app.client.get("/v1/quotes/\(UUID().uuidString.lowercased())").status, 404)
        let malformed = try app.client.get("/v1/quotes/not-a-uuid")
        XCTAssertEqual(malformed.status, 404)
        XCTAssertEqual(try malformed.jsonObject()["code"] as? String, "not_found")
    }

    func testCategoryFiltersExactlyAndUnknownCategoryIs422() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(["a", "b", "c"], category: "humor")
        try await app.insertQuotes(["d"], category: "love")
        let humor = try app.client.get("/v1/quotes?category=humor")
        XCTAssertEqual(try humor.jsonObject()["total"] as? Int, 3)
        XCTAssertTrue(try humor.items().allSatisfy { $0["category"] as? String == "humor" })
        let unknown = try app.client.get("/v1/quotes?category=Humor")
        XCTAssertEqual(unknown.status, 422)
        XCTAssertEqual(try unknown.errorFields(), ["category"])
    }

    func testPaginationParametersAreValidated() async throws {
        let app = try await startTestApp()
        for query in ["page=0", "page=-1", "page=abc", "page_size=0", "page_size=101", "page_size=x"] {
            let response = try app.client.get("/v1/quotes?\(query)")
            XCTAssertEqual(response.status, 422, query)
            XCTAssertEqual(try response.jsonObject()["code"] as? String, "validation_failed", query)
        }
        XCTAssertEqual(try app.client.get("/v1/quotes?page_size=100").status, 200)
    }

    func testCursorPagesNeverRepeatOrSkipWhileQuotesAreInserted() async throws {
        let app = try await startTestApp()
        let original = try await app.insertQuotes((0..<50).map { "Original \($0)" })
        var seen: [String] = []
        var response = try app.client.get("/v1/quotes?page_size=7")
        var pages = 0
        while pages < 20 {
            pages += 1
            seen += try response.items().map { $0["id"] as! String }
            // New quotes arrive between every page: they are newer, so they never enter the walk.
            try await app.insertQuotes(["Inserted during page \(pages)"])
            guard let cursor = try response.jsonObject()["next_cursor"] as? String else { break }
            response = try app.client.get("/v1/quotes?page_size=7&cursor=\(cursor)")
            XCTAssertEqual(response.status, 200)
            let body = try response.jsonObject()
            XCTAssertTrue(body["page"] is NSNull, "a cursor page has no page number")
            XCTAssertEqual(body["total"] as? Int, 50 + pages)
        }
        XCTAssertEqual(seen, original.reversed().map { $0.uuidString.lowercased() })
    }

    func testCursorWalksTiesAndMicrosecondGapsExactly() async throws {
        let app = try await startTestApp()
        // Ten quotes at one moment (a seed inserts thousands so: the id breaks the tie), and ten a microsecond apart
        // (a position rounded to the millisecond, as a Date would keep it, would skip or repeat them).
        let ids = try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT 'Tie ' || n, 'Test Author', 'wisdom', timestamptz '2026-01-01 12:00:00.123456+00' \
                FROM generate_series(1, 10) n
                UNION ALL
                SELECT 'Gap ' || n, 'Test Author', 'love', timestamptz '2026-01-01 12:00:00.123456+00' \
                + n * interval '1 microsecond'
                FROM generate_series(1, 10) n
                RETURNING id
                """
            ).map { try $0.decode("id", as: UUID.self).uuidString.lowercased() }
        }
        let expected = try await app.withConnection { connection in
            try connection.query("SELECT id FROM quotes ORDER BY created_at DESC, id DESC")
                .map { try $0.decode("id", as: UUID.self).uuidString.lowercased() }
        }
        XCTAssertEqual(Set(expected), Set(ids))
        var seen: [String] = []
        var response = try app.client.get("/v1/quotes?page_size=3")
        for _ in 0..<10 {
            seen += try response.items().map { $0["id"] as! String }
            guard let cursor = try response.jsonObject()["next_cursor"] as? String else { break }
            response = try app.client.get("/v1/quotes?page_size=3&cursor=\(cursor)")
        }
        XCTAssertEqual(seen, expected)
    }

    func testOffsetPagesOverTiesMatchTheFullOrderOverallAndByCategory() async throws {
        let app = try await startTestApp()
        // 40 quotes on 8 timestamps (5 per moment: the id breaks the tie), categories alternating.
        try await app.withConnection { connection in
            _ = try connection.query(
                """
                INSERT INTO quotes (text, author, category, created_at)
                SELECT 'Tied ' || n, 'Test Author', CASE WHEN n % 2 = 0 THEN 'love' ELSE 'humor' END,
                       timestamptz '2026-01-01 12:00:00+00' + (n / 5) * interval '1 second'
                FROM generate_series(1, 40) n
                """)
        }
        for category in [nil, "love"] {
            let filter = category.map { " WHERE category = '\($0)'" } ?? ""
            let expected = try await app.withConnection { connection in
                try connection.query(
                    PGQuery(unsafeSQL: "SELECT id FROM quotes\(filter) ORDER BY created_at DESC, id DESC")
                )
                .map { try $0.decode("id", as: UUID.self).uuidString.lowercased() }
            }
            let query = category.map { "&category=\($0)" } ?? ""
            var seen: [String] = []
            for page in 1...8 {
                let response = try app.client.get("/v1/quotes?page=\(page)&page_size=3\(query)")
                XCTAssertEqual(try response.jsonObject()["total"] as? Int, expected.count)
                seen += try response.items().map { $0["id"] as! String }
            }
            XCTAssertEqual(
                seen, Array(expected.prefix(24)), "pages 1-8 of 3: the order, each once (\(category ?? "all"))")
            let last = try app.client.get("/v1/quotes?page=\(expected.count / 3 + 1)&page_size=3\(query)")
            XCTAssertEqual(try last.items().map { $0["id"] as! String }, Array(expected.suffix(expected.count % 3)))
            XCTAssertEqual(try last.jsonObject()["has_more"] as? Bool, false)
            let past = try app.client.get("/v1/quotes?page=1000&page_size=3\(query)")
            XCTAssertEqual(try past.items().count, 0, "past the end")
            XCTAssertEqual(try past.jsonObject()["total"] as? Int, expected.count)
        }
    }

    func testCursorWithinACategory() async throws {
        let app = try await startTestApp()
        let wisdom = try await app.insertQuotes((0..<5).map { "W\($0)" }, category: "wisdom")
        try await app.insertQuotes(["L"], category: "love")
        let first = try app.client.get("/v1/quotes?category=wisdom&page_size=3")
        let cursor = try XCTUnwrap(try first.jsonObject()["next_cursor"] as? String)
        let second = try app.client.get("/v1/quotes?category=wisdom&page_size=3&cursor=\(cursor)")
        let ids = try first.items().map { $0["id"] as! String } + second.items().map { $0["id"] as! String }
        XCTAssertEqual(ids, wisdom.reversed().map { $0.uuidString.lowercased() })
        XCTAssertTrue(try second.jsonObject()["next_cursor"] is NSNull)
    }

    func testMalformedOrTamperedCursorIs422() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes((0..<3).map { "Q\($0)" })
        let cursor = try XCTUnwrap(try app.client.get("/v1/quotes?page_size=1").jsonObject()["next_cursor"] as? String)
        var tampered = Array(cursor)
        tampered[5] = tampered[5] == "A" ? "B" : "A"
        for bad in ["x", "%25", String(tampered), String(repeating: "A", count: 300)] {
            let response = try app.client.get("/v1/quotes?cursor=\(bad)")
            XCTAssertEqual(response.status, 422, bad)
            XCTAssertEqual(try response.errorFields(), ["cursor"], bad)
        }
        XCTAssertEqual(try app.client.get("/v1/quotes?cursor=\(cursor)&page=2").status, 422, "cursor and page together")
    }

    func testCategoriesListsAllFiveEvenWhenEmpty() async throws {
        let app = try await startTestApp()
        try await app.insertQuotes(["x", "y"], category: "love")
        let items = try app.client.get("/v1/categories").items()
        XCTAssertEqual(items.map { $0["category"] as? String }, ["motivation", "love", "success", "wisdom", "humor"])
        XCTAssertEqual(items.map { $0["count"] as? Int }, [0, 2, 0, 0, 0])
    }

    func testTotalsStayExactThroughInsertsUpdatesAndDeletes() async throws {
        let app = try await startTestApp()
        let ids = try await app.insertQuotes(["one", "two", "three"], category: "success")
        try await app.withConnection { connection in
            try connection.query("UPDATE quotes SET category = 'humor' WHERE id = \(ids[0])")
            try connection.query("DELETE FROM quotes WHERE id = \(ids[1])")
        }
        let items = try app.client.get("/v1/categories").items()
        XCTAssertEqual(items.first { $0["category"] as? String == "success" }?["count"] as? Int, 1)
        XCTAssertEqual(items.first { $0["category"] as? String == "humor" }?["count"] as? Int, 1)
        XCTAssertEqual(try app.client.get("/v1/quotes").jsonObject()["total"] as? Int, 2)
    }
}
