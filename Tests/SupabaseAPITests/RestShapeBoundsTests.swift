import Foundation
import PGClient
import TestSupport
import XCTest

/// Issue 42: `/rest/v1` reads are bounded by their parsed shape (README, "Bounds on /rest/v1"): each bound at its
/// edge is answered, one past it is `400 PGRST100` naming the bound, and nothing is changed.
final class RestShapeBoundsTests: XCTestCase {
    private var app: TestApp!

    override func setUp() async throws { app = try await TestApp.start { $0.httpRefusalDelay = 0 } }
    override func tearDown() async throws { await app.stop() }

    /// A 400 `PGRST100` whose message names `bound`.
    private func assertPastBound(
        _ response: HTTPTestResponse, _ bound: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(response.status, 400, response.text, file: file, line: line)
        let body = (try? response.jsonObject()) ?? [:]
        XCTAssertEqual(body["code"] as? String, "PGRST100", response.text, file: file, line: line)
        XCTAssertTrue((body["message"] as? String ?? "").contains(bound), response.text, file: file, line: line)
    }

    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: ".*-_")))!
    }

    private func collection(of user: TestUser, quotes: Int) async throws -> String {
        let created = try app.supabase(
            "POST", "/rest/v1/collections", as: user, body: ["name": "Bounded"],
            headers: ["Prefer": "return=representation", "Accept": "application/vnd.pgrst.object+json"])
        let id = try XCTUnwrap(try created.jsonObject()["id"] as? String, created.text)
        try await app.withConnection { connection in
            try connection.query(
                """
                INSERT INTO collection_quotes (collection_id, quote_id)
                SELECT \(id)::uuid, id FROM quotes ORDER BY id LIMIT \(quotes)
                """)
        }
        return id
    }

    func testFiltersAreBoundedAtThirtyTwoPerRequest() async throws {
        _ = try await app.insertQuotes(["Filtered"])
        // A group counts as a filter beside its members: 1 + 31 at the edge.
        let members = (0..<31).map { "text.eq.m\($0)" } + ["text.eq.Filtered"]
        let edge = try app.supabase(
            "GET", "/rest/v1/quotes?or=" + Self.encoded("(\(members.dropFirst().joined(separator: ",")))"))
        XCTAssertEqual(edge.status, 200, edge.text)
        XCTAssertEqual(edge.jsonArray.count, 1)
        let past = try app.supabase("GET", "/rest/v1/quotes?or=" + Self.encoded("(\(members.joined(separator: ",")))"))
        assertPastBound(past, "at most 32 filters")
        // Top-level parameters count the same.
        let parameters = (0..<33).map { "text=neq.p\($0)" }
        XCTAssertEqual(
            try app.supabase("GET", "/rest/v1/quotes?" + parameters.dropFirst().joined(separator: "&")).status, 200)
        assertPastBound(
            try app.supabase("GET", "/rest/v1/quotes?" + parameters.joined(separator: "&")), "at most 32 filters")
        // Past the bound a write changes nothing.
        let user = try await app.makeUser()
        let id = try await collection(of: user, quotes: 0)
        let rename = try app.supabase(
            "PATCH",
            "/rest/v1/collections?id=eq.\(id)&"
                + parameters.dropFirst().joined(separator: "&")
                .replacingOccurrences(of: "text=", with: "name="), as: user, body: ["name": "Renamed"])
        assertPastBound(rename, "at most 32 filters")
        let name = try await app.withConnection {
            try $0.query("SELECT name FROM collections WHERE id = \(id)::uuid")[0].decode("name", as: String.self)
        }
        XCTAssertEqual(name, "Bounded")
    }

    func testGroupsNestAtMostFourLevels() async throws {
        _ = try await app.insertQuotes(["Nested"])
        let four = "(text.eq.Nested,or(text.eq.a,and(text.eq.b,or(text.eq.c))))"
        let edge = try app.supabase("GET", "/rest/v1/quotes?or=" + Self.encoded(four))
        XCTAssertEqual(edge.status, 200, edge.text)
        XCTAssertEqual(edge.jsonArray.count, 1)
        let five = "(text.eq.Nested,or(text.eq.a,and(text.eq.b,or(text.eq.c,and(text.eq.d)))))"
        assertPastBound(try app.supabase("GET", "/rest/v1/quotes?or=" + Self.encoded(five)), "nest at most 4 levels")
    }

    func testEmbedsNestAtMostTwoLevels() async throws {
        _ = try await app.insertQuotes(["Embedded"])
        let user = try await app.makeUser()
        _ = try await collection(of: user, quotes: 1)
        let edge = try app.supabase(
            "GET", "/rest/v1/collections?select=" + Self.encoded("*,collection_quotes(*,quotes(*))"), as: user)
        XCTAssertEqual(edge.status, 200, edge.text)
        let embedded = edge.jsonArray.first?["collection_quotes"] as? [[String: Any]]
        XCTAssertEqual((embedded?.first?["quotes"] as? [String: Any])?["text"] as? String, "Embedded")
        let three = "id,collection_quotes(quote_id,collections(id,collection_quotes(quote_id)))"
        assertPastBound(
            try app.supabase("GET", "/rest/v1/collections?select=" + Self.encoded(three), as: user),
            "embeds nest at most 2 levels")
    }

    func testAReadEmbedsOneArrayAtTheFirstLevel() async throws {
        _ = try await app.insertQuotes(["Arrays"])
        let user = try await app.makeUser()
        _ = try await collection(of: user, quotes: 1)
        for select in [
            "*,collections(id,collection_quotes(quote_id))", "a:collection_quotes(*),b:collection_quotes(*)",
        ] {
            let table = select.hasPrefix("*") ? "collection_quotes" : "collections"
            assertPastBound(
                try app.supabase("GET", "/rest/v1/\(table)?select=" + Self.encoded(select), as: user),
                "at most 1 array")
        }
        // A count is no array of rows.
        let counted = try app.supabase(
            "GET", "/rest/v1/collections?select=" + Self.encoded("a:collection_quotes(*),b:collection_quotes(count)"),
            as: user)
        XCTAssertEqual(counted.status, 200, counted.text)
    }

    func testAnEmbeddedArrayHoldsAtMostAThousandRows() async throws {
        try await app.withConnection { connection in
            try connection.query(
                "INSERT INTO quotes (text, author, category) SELECT 'Row ' || n, 'A', 'love' FROM generate_series(1, 1001) n"
            )
        }
        let user = try await app.makeUser()
        let id = try await collection(of: user, quotes: 1000)
        let select = "/rest/v1/collections?select=" + Self.encoded("id,collection_quotes(quote_id)")
        let edge = try app.supabase("GET", select, as: user)
        XCTAssertEqual((edge.jsonArray.first?["collection_quotes"] as? [Any])?.count, 1000, edge.text)
        // One more row than an account's quota lets in, as an older database could hold.
        try await app.withConnection { connection in
            try connection.transaction { connection in
                try connection.query("SET LOCAL session_replication_role = replica")
                try connection.query(
                    """
                    INSERT INTO collection_quotes (collection_id, quote_id)
                    SELECT \(id)::uuid, q.id FROM quotes q
                    WHERE NOT EXISTS (SELECT 1 FROM collection_quotes c WHERE c.quote_id = q.id) LIMIT 1
                    """)
            }
        }
        let past = try app.supabase("GET", select, as: user)
        XCTAssertEqual(past.status, 200, past.text)
        XCTAssertEqual((past.jsonArray.first?["collection_quotes"] as? [Any])?.count, 1000)
    }

    func testOffsetIsBoundedAtTenThousand() async throws {
        _ = try await app.insertQuotes(["Offset"])
        let edge = try app.supabase("GET", "/rest/v1/quotes?offset=10000")
        XCTAssertEqual(edge.status, 200, edge.text)
        XCTAssertEqual(edge.jsonArray.count, 0)
        assertPastBound(try app.supabase("GET", "/rest/v1/quotes?offset=10001"), "offset is at most 10000")
    }

    /// `count=exact` counts up to 10,000 rows; past it the planner's estimate stands in (PostgREST's
    /// `count=estimated`), and `count=planned` is the estimate.
    func testCountsAreExactUpToTenThousandRowsThenPlanned() async throws {
        try await app.withConnection { connection in
            try connection.execute(unsafeSQL: "ALTER TABLE quotes SET (autovacuum_enabled = false)")
            try connection.query(
                """
                INSERT INTO quotes (text, author, category)
                SELECT 'Counted ' || n, 'A', CASE WHEN n <= 10000 THEN 'love' ELSE 'humor' END
                FROM generate_series(1, 12000) n
                """)
            try connection.execute(unsafeSQL: "ANALYZE quotes")
            // The planner still believes in 12,000 rows: an estimate differs from the count.
            try connection.query("DELETE FROM quotes WHERE category = 'humor' AND text LIKE 'Counted 11%'")
        }
        func total(_ path: String, _ count: String = "exact") throws -> (Int?, Int) {
            let response = try app.supabase("GET", path, headers: ["Prefer": "count=\(count)"])
            let range = response.header("Content-Range") ?? ""
            return (Int(range.split(separator: "/").last ?? ""), response.status)
        }
        let edge = try total("/rest/v1/quotes?select=id&category=eq.love&limit=1")
        XCTAssertEqual(edge.0, 10_000)
        XCTAssertEqual(edge.1, 206)
        let exactRows = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM quotes")[0].decode("n", as: Int.self)
        }
        let past = try total("/rest/v1/quotes?select=id&limit=1")
        XCTAssertEqual(past.1, 206)
        XCTAssertGreaterThan(past.0 ?? 0, 10_000)
        XCTAssertNotEqual(past.0, exactRows, "an estimate, not a count of every row")
        let planned = try total("/rest/v1/quotes?select=id&category=eq.love&limit=1", "planned")
        XCTAssertNotNil(planned.0)
        XCTAssertEqual(planned.1, 206)
        // A small count stays exact, HEAD too.
        let small = try app.supabase(
            "HEAD", "/rest/v1/quotes?text=eq.Counted%201", headers: ["Prefer": "count=exact"])
        XCTAssertEqual(small.header("Content-Range"), "0-0/1")
    }
}
