import Foundation
import TestSupport
import XCTest

/// Migration 0047: a one-word search that no word of the vocabulary contains is answered from one probe of the
/// vocabulary's trigram index (total 0), and a word found only inside longer words is searched and ranked as
/// before.
final class SearchAbsentWordTests: XCTestCase {
    private func search(_ app: TestApp, _ query: String, type: String) throws -> HTTPTestResponse {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try app.client.get("/v1/quotes/search?q=\(encoded)&type=\(type)&page_size=20")
    }

    func testAnAbsentWordAnswersAnEmptyPageFromOneProbe() async throws {
        let app = try await TestApp.start()
        try await app.insertQuotes(["Ostvelmir sings", "The velmirbra river", "Plain words"])
        let absentWords = [
            ("xylophone", "keyword"), ("XYLOPHONE", "keyword"), ("nobody", "author"), ("ÉCOLÉ", "keyword"),
        ]
        for (query, type) in absentWords {
            let response = try search(app, query, type: type)
            XCTAssertEqual(response.status, 200, query)
            XCTAssertEqual(try response.items().count, 0, query)
            XCTAssertEqual(try response.jsonObject()["total"] as? Int, 0, query)
            XCTAssertEqual(try response.jsonObject()["total_is_exact"] as? Bool, true, query)
            XCTAssertEqual(try response.jsonObject()["has_more"] as? Bool, false, query)
        }
        // The absent word reads the trigram index of the vocabulary only, not its key (the three tiers' statement).
        let absent = try app.scansInPlans(
            of: "SELECT * FROM quote_search_words_text('xylophone', '%xylophone%', '\\mxylophone\\M', "
                + "'\\mxylophone', NULL, 21, 0)")
        XCTAssertTrue(absent.contains("quote_vocabulary_word_trgm_idx"), absent)
        XCTAssertFalse(absent.contains("quote_vocabulary_pkey"), absent)
        // A word inside longer words is not absent: the tiers are read.
        let inside = try app.scansInPlans(
            of: "SELECT * FROM quote_search_words_text('velmir', '%velmir%', '\\mvelmir\\M', '\\mvelmir', NULL, 21, 0)")
        XCTAssertTrue(inside.contains("quote_vocabulary_pkey"), inside)
        await app.stop()
    }

    func testAWordOnlyInsideLongerWordsRanksAsBefore() async throws {
        let app = try await TestApp.start()
        // Oldest first: inside a word, the start of a word, inside again (newest); and a quote without it.
        let ids = try await app.insertQuotes([
            "Ostvelmir sings", "The velmirbra river", "A kavelmir night", "Plain words", "Snake_case_words",
        ])
        let response = try search(app, "velmir", type: "keyword")
        XCTAssertEqual(try response.jsonObject()["total"] as? Int, 3)
        let order = try response.items().map { $0["id"] as! String }
        XCTAssertEqual(order, [ids[1], ids[2], ids[0]].map { $0.uuidString.lowercased() })
        // An underscore is a word character and a literal: inside a longer word, found.
        let underscore = try search(app, "e_cas", type: "keyword").items().map { $0["text"] as! String }
        XCTAssertEqual(underscore, ["Snake_case_words"])
        XCTAssertEqual(try search(app, "e_xas", type: "keyword").jsonObject()["total"] as? Int, 0)
        await app.stop()
    }
}
