import Foundation
import PGClient
import QuoteVault
import Synchronization
import TestSupport
import XCTest

/// `GET /v1/sync`: the whole library from scratch, then every change after a token, deletions included.
final class SyncFeedTests: XCTestCase {
    func testFullSyncListsTheLibraryInPagesAndTheTokenContinuesWithDeletions() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes((0..<7).map { "Quote \($0)" })
        for quote in quotes.prefix(5) {
            XCTAssertEqual(
                try app.client.send("PUT", "/v1/favorites/\(lower(quote))", headers: user.authorization).status, 201)
        }
        let collection =
            try app.client.send("POST", "/v1/collections", json: ["name": "Mine"], headers: user.authorization)
            .jsonObject()["id"] as! String
        for quote in quotes.suffix(3) {
            XCTAssertEqual(
                try app.client.send(
                    "PUT", "/v1/collections/\(collection)/quotes/\(lower(quote))", headers: user.authorization
                ).status, 201)
        }
        _ = try app.client.send("PATCH", "/v1/me", json: ["display_name": "Ada"], headers: user.authorization)

        // Pages of 2: the profile, 1 collection, 5 favorites and 3 links, each exactly once.
        var library = SyncedLibrary()
        var seen: [String] = []
        var token: String?
        for _ in 0..<20 {
            let body = try app.client.get(
                "/v1/sync?limit=2" + (token.map { "&since=\($0)" } ?? ""), headers: user.authorization
            ).jsonObject()
            let changes = body["changes"] as! [[String: Any]]
            XCTAssertLessThanOrEqual(changes.count, 2)
            for change in changes {
                XCTAssertEqual(change["op"] as? String, "upsert", "a first sync lists upserts only")
                seen.append("\(change["type"]!)/\(change["quote_id"] ?? change["id"] ?? "")")
                try library.apply(change)
            }
            token = body["next"] as? String
            if body["has_more"] as? Bool != true { break }
        }
        XCTAssertEqual(seen.count, 1 + 1 + 5 + 3)
        XCTAssertEqual(library, try SyncedLibrary.onServer(app.client, user))
        XCTAssertEqual(library.displayName, "Ada")
        XCTAssertEqual(library.collections[collection], "Mine#3")

        // Nothing changed: an empty page that keeps the position.
        let idle = try app.client.get("/v1/sync?since=\(token!)", headers: user.authorization).jsonObject()
        XCTAssertEqual((idle["changes"] as? [Any])?.count, 0)
        XCTAssertEqual(idle["has_more"] as? Bool, false)

        // Deletions come through the feed.
        XCTAssertEqual(
            try app.client.send("DELETE", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 204)
        XCTAssertEqual(
            try app.client.send(
                "DELETE", "/v1/collections/\(collection)/quotes/\(lower(quotes[6]))", headers: user.authorization
            ).status, 204)
        let changes =
            try app.client.get("/v1/sync?since=\(token!)", headers: user.authorization).jsonObject()["changes"]
            as! [[String: Any]]
        XCTAssertTrue(
            changes.contains {
                $0["type"] as? String == "favorite" && $0["op"] as? String == "delete"
                    && $0["quote_id"] as? String == lower(quotes[0]) && $0["favorited_at"] == nil
            }, "\(changes)")
        XCTAssertTrue(
            changes.contains { $0["type"] as? String == "collection_quote" && $0["op"] as? String == "delete" },
            "\(changes)")
        token = try app.client.pull(user, since: token, into: &library)
        XCTAssertEqual(library.collections[collection], "Mine#2", "the collection's count follows its quotes")

        XCTAssertEqual(
            try app.client.send("DELETE", "/v1/collections/\(collection)", headers: user.authorization).status, 204)
        let deleted =
            try app.client.get("/v1/sync?since=\(token!)", headers: user.authorization).jsonObject()["changes"]
            as! [[String: Any]]
        XCTAssertEqual(deleted.count, 1, "the collection's deletion says its quotes went with it: \(deleted)")
        XCTAssertEqual(deleted.first?["op"] as? String, "delete")
        XCTAssertNil(deleted.first?["collection"])
        try app.client.pull(user, since: token, into: &library)
        XCTAssertEqual(library, try SyncedLibrary.onServer(app.client, user))
    }

    func testChangesThroughTheSupabaseSurfaceAreInTheFeed() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quote = try await app.insertQuotes(["Via REST"])[0]
        var library = SyncedLibrary()
        let token = try app.client.pull(user, since: nil, into: &library)
        // A write that bypasses every /v1 route: the database records it all the same.
        try await app.withConnection {
            try $0.query("INSERT INTO user_favorites (user_id, quote_id) VALUES (\(user.id), \(quote))")
        }
        try app.client.pull(user, since: token, into: &library)
        XCTAssertEqual(library.favorites, [lower(quote)])
    }

    func testLimitAndTokenEdges() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser(), other = try await app.makeUser()
        for limit in ["0", "1001", "-1", "x", ""] {
            let response = try app.client.get("/v1/sync?limit=\(limit)", headers: user.authorization)
            XCTAssertEqual(response.status, 422, limit)
            XCTAssertEqual(try response.errorFields(), ["limit"])
        }
        XCTAssertEqual(try app.client.get("/v1/sync?limit=1", headers: user.authorization).status, 200)
        XCTAssertEqual(try app.client.get("/v1/sync?limit=1000", headers: user.authorization).status, 200)
        let token = try app.client.get("/v1/sync", headers: user.authorization).jsonObject()["next"] as! String
        XCTAssertEqual(try app.client.get("/v1/sync?since=\(token)", headers: user.authorization).status, 200)
        var altered = Array(token.utf8)
        altered[5] = altered[5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        for malformed in ["", "abc", String(decoding: altered, as: UTF8.self), String(repeating: "A", count: 200)] {
            let response = try app.client.get("/v1/sync?since=\(malformed)", headers: user.authorization)
            XCTAssertEqual(response.status, 422, malformed)
            XCTAssertEqual(try response.errorFields(), ["since"])
        }
        XCTAssertEqual(
            try app.client.get("/v1/sync?since=\(token)", headers: other.authorization).status, 422,
            "another user's token")
        XCTAssertEqual(try app.client.get("/v1/sync").status, 401)
    }

    func testATokenOlderThanTheKeptHistoryIs410() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["Old", "New"])
        var library = SyncedLibrary()
        let old = try app.client.pull(user, since: nil, into: &library)
        _ = try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization)
        let recent = try app.client.pull(user, since: old, into: &library)
        _ = try app.client.send("PUT", "/v1/favorites/\(lower(quotes[1]))", headers: user.authorization)
        // Age the history of the first favorite past 30 days, then let pruning (bounded passes) run.
        try await app.withConnection {
            try $0.query(
                """
                UPDATE sync_changes SET changed_at = now() - interval '31 days'
                WHERE user_id = \(user.id) AND kind = 'favorite' AND object_id = \(quotes[0])
                """)
        }
        let maintenance = app.application.context.sync.maintenance
        var pruned = 0
        while case let count = try await maintenance.pruneOnce(batchSize: 1), count > 0 { pruned += count }
        XCTAssertGreaterThanOrEqual(pruned, 1)
        let expired = try app.client.get("/v1/sync?since=\(old)", headers: user.authorization)
        XCTAssertEqual(expired.status, 410)
        XCTAssertEqual(try expired.jsonObject()["code"] as? String, "sync_token_expired")
        // A token after the pruned change still works, and a full sync starts over.
        try app.client.pull(user, since: recent, into: &library)
        XCTAssertEqual(library.favorites, Set(quotes.map(lower)))
        var fresh = SyncedLibrary()
        try app.client.pull(user, since: nil, into: &fresh)
        XCTAssertEqual(fresh, try SyncedLibrary.onServer(app.client, user))
        // Recent history is kept.
        let prunedAgain = try await maintenance.pruneOnce()
        XCTAssertEqual(prunedAgain, 0)
    }

    /// The classic bug: positions from a sequence commit out of order, a reader moves past a number whose
    /// transaction has not committed yet, and never sees it. Writers here hold their transactions open for
    /// random short times while readers sync continuously; every reader must end with every favorite.
    func testConcurrentWritersNeverMakeASyncingReaderSkipAChange() async throws {
        let app = try await startTestApp {
            $0.databasePoolSize = 8
            // The readers open a connection a request, as fast as they can: past the new-connection rate.
            $0.httpNewConnectionsPerAddress = 0
            // Three readers of one account pull back to back, waiting on the writers' locks: far past a fair
            // share of database time (MeasuredCostTests covers that limit; this test is about the feed).
            $0.databaseClientShareMilliseconds = 600_000
            $0.databaseClientBudgetMilliseconds = 600_000
        }
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes((0..<120).map { "Concurrent \($0)" })
        let writers = 4, perWriter = quotes.count / writers
        let url = app.databaseURL
        let port = app.application.port
        let written = Locked(false)
        // Real threads, not tasks: the blocking clients must truly run at once (the cooperative pool has one
        // thread per core, which would run them nearly one after another and hide the race).
        let writerFailures = onThreads(writers) { writer in
            let connection = try PGConnection(connectionString: url)
            var generator = SplitMix64(seed: UInt64(writer + 1))
            for quote in quotes[(writer * perWriter)..<((writer + 1) * perWriter)] {
                // The change gets its position at the insert; the commit comes a random while later.
                let pause = Double(generator.next() % 8) / 1000
                try connection.transaction { connection in
                    try connection.query("INSERT INTO user_favorites (user_id, quote_id) VALUES (\(user.id), \(quote))")
                    try connection.query("SELECT pg_sleep(\(pause))")
                }
            }
        }
        let readerLibraries = Locked([SyncedLibrary]())
        let readerFailures = onThreads(3) { _ in
            let client = HTTPTestClient(port: port)
            var library = SyncedLibrary()
            var token = try client.pull(user, since: nil, limit: 7, into: &library)
            for _ in 0..<5_000 where !written.value {
                token = try client.pull(user, since: token, limit: 7, into: &library)
            }
            // Once every writer is done, one more sync from the reader's own token.
            try client.pull(user, since: token, limit: 7, into: &library)
            readerLibraries.withLock { $0.append(library) }
        }
        try await Task.detached { try writerFailures.wait() }.value
        written.value = true
        try await Task.detached { try readerFailures.wait() }.value
        let readers = readerLibraries.value
        XCTAssertEqual(readers.count, 3)
        for library in readers { XCTAssertEqual(library.favorites, Set(quotes.map(lower))) }
    }
}
