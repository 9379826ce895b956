import Foundation
import HTTPServer
import Logging
import PGClient
import QuoteAPI
import QuoteVault
import TestSupport
import XCTest

/// DATABASE_READ_URL: public reads come from a replica, a user's own data from the primary.
///
/// The "replica" here is a second database with the same schema but different rows, so every answer shows which
/// database served it; a dead port listed before it must not stop anything.
final class ReadReplicaTests: XCTestCase {
    private var logger: Logger {
        var logger = Logger(label: "ReadReplicaTests")
        logger.logLevel = .critical
        return logger
    }

    /// A pool on `url` with every migration applied.
    private func migratedPool(_ url: String) async throws -> PGPool {
        let pool = PGPool(connectionString: url, size: 1, logger: logger)
        let migrations = try Migration.load(from: TestApp.repositoryRoot.appendingPathComponent("migrations"))
        try await Migrator(migrations: migrations, logger: logger).migrate(using: pool)
        return pool
    }

    func testPublicReadsComeFromTheReplicaAndUserDataFromThePrimary() async throws {
        let replicaURL = try TestDatabase.makeDatabase()
        let replicaPool = try await migratedPool(replicaURL)
        defer { replicaPool.shutdown() }
        let replicaQuote = try await replicaPool.withConnection { connection in
            let id = try connection.query("""
                INSERT INTO quotes (text, author, category) VALUES ('Served by the replica', 'Replica Author', 'wisdom')
                RETURNING id
                """).first!.decode("id", as: UUID.self)
            try connection.query("INSERT INTO quote_of_day (date, quote_id) VALUES ('2020-02-02', \(id))")
            return id
        }
        let dead = "postgresql://nobody@127.0.0.1:1/none"
        let app = try await TestApp.start {
            $0.databaseReadURLs = [dead, replicaURL]
            $0.replicaCheckInterval = .milliseconds(100)
        }
        defer { Task { await app.stop() } }
        let primaryQuote = try await app.insertQuotes(["Served by the primary"], author: "Primary Author")[0]

        // Until the first check the primary answers; then the replica.
        let deadline = Date().addingTimeInterval(15)
        var texts: [String] = []
        while Date() < deadline {
            texts = try app.client.get("/v1/quotes").items().compactMap { $0["text"] as? String }
            if texts == ["Served by the replica"] { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(texts, ["Served by the replica"], "the quote page comes from the replica")
        let search = try app.client.get("/v1/quotes/search?q=served").items().compactMap { $0["text"] as? String }
        XCTAssertEqual(search, ["Served by the replica"])
        XCTAssertEqual(try app.client.get("/v1/quotes/\(replicaQuote)").status, 200)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(primaryQuote)").status, 404, "a single quote too")
        let stored = try app.client.get("/v1/qotd?date=2020-02-02")
        XCTAssertEqual(stored.status, 200)
        XCTAssertTrue(stored.text.contains("Served by the replica"), stored.text)

        // A user's own data: written and read back on the primary, whatever the replica holds.
        let user = try await app.makeUser()
        XCTAssertEqual(try app.client.send("PUT", "/v1/favorites/\(primaryQuote)", headers: user.authorization).status, 201)
        let favorites = try app.client.get("/v1/favorites", headers: user.authorization).items()
        XCTAssertEqual(favorites.compactMap { ($0["quote"] as? [String: Any])?["text"] as? String ?? $0["text"] as? String },
                       ["Served by the primary"])
        XCTAssertEqual(try app.client.get("/v1/me", headers: user.authorization).status, 200)

        // A date nobody chose yet is chosen on the primary, from the primary's quotes.
        let fresh = try app.client.get("/v1/qotd?date=2021-03-03")
        XCTAssertEqual(fresh.status, 200)
        XCTAssertTrue(fresh.text.contains("Served by the primary"), fresh.text)
        let use = try XCTUnwrap(app.application.context.readPool.replicaUse)
        XCTAssertEqual(use.healthy, [false, true])
        // The "replica" is a server not in recovery (as a read URL is after a failover): /metrics says what it is.
        XCTAssertEqual(use.standby, [false, false])
        XCTAssertEqual(use.replicaReads, 0)
        XCTAssertGreaterThan(use.primaryReads, 0)
        let metrics = try app.client.get("/metrics").text
        XCTAssertTrue(metrics.contains("db_read_replicas_healthy 1"), metrics)
        XCTAssertTrue(metrics.contains("db_reads_served{served_by=\"replica\"} 0"), metrics)
        XCTAssertTrue(metrics.contains("db_read_nodes_in_use{role=\"primary\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("db_read_nodes_in_use{role=\"replica\"} 0"), metrics)
        XCTAssertTrue(metrics.contains("db_public_pool_connections{state=\"size\"}"), metrics)
    }

    func testWithThePrimaryDownReadsGoOnTheInstanceStaysReadyAndWritesAnswer503() async throws {
        let replicaURL = try TestDatabase.makeDatabase()
        let replicaPool = try await migratedPool(replicaURL)
        defer { replicaPool.shutdown() }
        let primaryCluster = try TestDatabase.makeDedicatedCluster(label: "primary")
        let primaryURL = try primaryCluster.start()
        defer { try? primaryCluster.stop() }
        let app = try await TestApp.start(databaseURL: primaryURL) {
            $0.databaseReadURLs = [replicaURL]
            $0.replicaCheckInterval = .milliseconds(100)
        }
        defer { Task { await app.stop() } }
        let user = try await app.makeUser()
        let quote = try await app.insertQuotes(["On the primary"])[0]
        XCTAssertEqual(try app.client.get("/ready").text, #"{"status":"ready"}"#)

        try primaryCluster.stop()
        let ready = try app.client.get("/ready")
        XCTAssertEqual(ready.status, 200, "a load balancer keeps the instance for reads")
        XCTAssertEqual(ready.text, #"{"status":"ready","primary":"unavailable"}"#)
        XCTAssertEqual(try app.client.get("/v1/quotes").status, 200, "public reads go on from the replica")
        XCTAssertEqual(try app.client.send("PUT", "/v1/favorites/\(quote)", headers: user.authorization).status, 503)

        _ = try primaryCluster.start()
        var status = 0
        for _ in 0..<100 where status != 201 {  // at most ~20 s
            status = try app.client.send("PUT", "/v1/favorites/\(quote)", headers: user.authorization).status
            if status != 201 { try await Task.sleep(for: .milliseconds(200)) }
        }
        XCTAssertEqual(status, 201, "writes resume once the primary is back")
        XCTAssertEqual(try app.client.get("/ready").text, #"{"status":"ready"}"#)
    }

    func testAReadOnlyRefusalIsAnsweredAs503() {
        let refused = PGError(kind: .server, sqlState: .readOnlySQLTransaction, message: "cannot execute INSERT in a read-only transaction")
        XCTAssertEqual(refused.httpError.status, 503)
    }
}
