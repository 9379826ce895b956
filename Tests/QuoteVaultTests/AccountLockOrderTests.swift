import Foundation
import PGClient
import TestSupport
import XCTest

/// One account's writers take its locks in one order (migration 0046): a transaction that already changed the
/// library (as a POST /v1/sync batch does) and a single insert under a quota never wait on each other in a cycle.
final class AccountLockOrderTests: XCTestCase {
    func testABatchAndAnInsertUnderAQuotaOfOneAccountDoNotDeadlock() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let user = try await app.makeUser()
        let (collection, quotes) = try await app.withConnection { connection in
            let collection = try connection.query(
                "INSERT INTO collections (user_id, name) VALUES (\(user.id), 'lock order') RETURNING id"
            )[0].decode("id", as: UUID.self)
            let quotes = try connection.query(
                """
                INSERT INTO quotes (text, author, category)
                SELECT 'lock order ' || n, 'Test Author', 'wisdom' FROM generate_series(1, 2) AS n RETURNING id
                """
            ).map { try $0.decode("id", as: UUID.self) }
            return (collection, quotes)
        }
        let url = app.databaseURL
        let batch = try PGConnection(connectionString: url)
        try batch.query("BEGIN")
        // The batch's first write: it now holds the account's feed position until it ends.
        try batch.query("INSERT INTO user_favorites (user_id, quote_id) VALUES (\(user.id), \(quotes[0]))")
        let single = Task.detached { () -> String? in
            do {
                let connection = try PGConnection(connectionString: url)
                try connection.query(
                    "INSERT INTO collection_quotes (collection_id, quote_id) VALUES (\(collection), \(quotes[1]))")
                return nil
            } catch {
                return "\(error)"
            }
        }
        // Lets the single insert reach its wait behind the batch (the order, not a timing, is what is tested).
        try await Task.sleep(for: .seconds(1))
        var batchError: String?
        do {
            try batch.query(
                "INSERT INTO collection_quotes (collection_id, quote_id) VALUES (\(collection), \(quotes[0]))")
            try batch.query("COMMIT")
        } catch {
            batchError = "\(error)"
        }
        let singleError = await single.value
        XCTAssertNil(batchError, "the batch")
        XCTAssertNil(singleError, "the single insert")
        let links = try await app.withConnection { connection in
            try connection.query(
                "SELECT count(*)::int8 AS n FROM collection_quotes WHERE collection_id = \(collection)")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(links, 2)
    }
}
