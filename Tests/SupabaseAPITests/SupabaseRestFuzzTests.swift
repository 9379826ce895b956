import Foundation
import PGClient
import TestSupport
import XCTest

/// Bounded fuzzing of the PostgREST grammar: mutated and random query strings, for every method, never get a
/// 5xx and never change data they should not (the seed is printed with any failure).
final class SupabaseRestFuzzTests: XCTestCase {
    private static let seeds = [
        "select=%2A&category=eq.love&order=created_at.desc&offset=0&limit=20",
        "select=%2A&text=ilike.%25life%25&limit=20&offset=20",
        "select=%2A&or=%28text.ilike.%2Alove%2A%2Cauthor.ilike.%2Alove%2A%29",
        "select=id%2Ctext%2Cauthor&order=created_at.desc.nullslast%2Cid.asc&limit=5",
        "select=%2A&category=neq.love&author=not.is.null",
        "select=%2A%2Cquotes%28%2A%29&user_id=eq.00000000-0000-0000-0000-000000000000",
        "select=%2A&id=in.%28a%2C%22b%2Cc%22%2C%22q%5C%22x%22%29",
        "or=%28and%28id.eq.1%2Cnot.or%28a.is.null%29%29%29&select=a%3Ab%2Cc%21inner%28d%29",
        "select=%2A%2Ccollection_quotes%28count%29&order=created_at.desc.nullslast",
        "select=%2A&text=wfts%28english%29.love&author=not.plfts.twain&on_conflict=id",
        "select=%2A&or=%28text.fts.love%20%26%20life%2Cauthor.phfts%28simple%29.mark%29",
    ]
    private static let tables = [
        "quotes", "profiles", "user_favorites", "collections", "collection_quotes", "quote_of_day",
    ]
    private static let pieces = [
        "%28", "%29", "%2C", "%22", "%5C", ".", "not.", "eq.", "in.", "is.", "*", "%2A", "&", "=", ":",
        "!inner", "::text", "fts(", "wfts.", "(count)", "is.true", "%00", "%27", ";", "--", "select", "order=",
        "limit=-1", "offset=99999999999999999999",
    ]

    func testMutatedQueriesNeverFailTheServer() async throws {
        let app = try await startTestApp()
        _ = try await app.insertQuotes((0..<5).map { "Fuzz quote \($0)" })
        let user = try await app.makeUser()
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        for round in 0..<300 {
            var query = Array(Self.seeds[round % Self.seeds.count])
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = Int.random(in: 0...query.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: query.insert(contentsOf: Self.pieces.randomElement(using: &rng)!, at: at)
                case 1 where at < query.count:
                    query.removeSubrange(at..<min(query.count, at + Int.random(in: 1...8, using: &rng)))
                default: query.insert(Character(Unicode.Scalar(UInt8.random(in: 0x21...0x7E, using: &rng))), at: at)
                }
            }
            let table = Self.tables.randomElement(using: &rng)!
            let method = ["GET", "GET", "PATCH", "DELETE", "POST"].randomElement(using: &rng)!
            let path = "/rest/v1/\(table)?" + String(query).replacingOccurrences(of: " ", with: "%20")
            let response = try app.client.send(
                method, path,
                headers: app.supabaseHeaders(
                    Bool.random(using: &rng) ? user : nil,
                    ["Content-Type": "application/json"]),
                body: method == "GET" ? nil : Array(#"{"name":"x"}"#.utf8))
            XCTAssertLessThan(
                response.status, 500, "seed \(seed) round \(round): \(method) \(path) → \(response.text)")
        }
        let quotes = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM quotes")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(quotes, 5, "seed \(seed)")
    }
}
