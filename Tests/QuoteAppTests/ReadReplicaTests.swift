import EmbeddedPostgres
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

    /// A pool on `url` with every migration and `schema/` applied.
    private func migratedPool(_ url: String) async throws -> PGPool {
        let pool = PGPool(connectionString: url, size: 1, logger: logger)
        try await Migrator(
            migrationsDirectory: TestApp.repositoryRoot.appendingPathComponent("migrations"), logger: logger
        ).migrate(using: pool)
        return pool
    }

    /// A quote in the category "wisdom", chosen as the quote of 2020-02-02; its id.
    private static func insertQuoteOfTheDay(_ text: String, author: String, _ connection: PGConnection) throws -> UUID {
        let id = try connection.query(
            """
            INSERT INTO quotes (text, author, category) VALUES (\(text), \(author), 'wisdom') RETURNING id
            """
        ).first!.decode("id", as: UUID.self)
        try connection.query("INSERT INTO quote_of_day (date, quote_id) VALUES ('2020-02-02', \(id))")
        return id
    }

    func testPublicReadsComeFromTheReplicaAndUserDataFromThePrimary() async throws {
        let replicaURL = try TestDatabase.makeDatabase()
        let replicaPool = try await migratedPool(replicaURL)
        defer { replicaPool.shutdown() }
        let replicaQuote = try await replicaPool.withConnection {
            try Self.insertQuoteOfTheDay("Served by the replica", author: "Replica Author", $0)
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
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(primaryQuote)", headers: user.authorization).status, 201)
        let favorites = try app.client.get("/v1/favorites", headers: user.authorization).items()
        XCTAssertEqual(
            favorites.compactMap { ($0["quote"] as? [String: Any])?["text"] as? String ?? $0["text"] as? String },
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

    /// A streaming standby of `primary` (pg_basebackup -R), started; its URL.
    private func makeStandby(of primary: EmbeddedPostgres) throws -> (EmbeddedPostgres, String) {
        let data = primary.dataDirectory
        // Replication connections from loopback, with the same password as any other.
        let hba = data.appendingPathComponent("pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8) + "\nhost replication all 127.0.0.1/32 scram-sha-256\n"
        try rules.write(to: hba, atomically: false, encoding: .utf8)
        let primaryURL = EmbeddedPostgres.url(
            port: try XCTUnwrap(primary.port),
            password: try XCTUnwrap(primary.password))
        let admin = try PGConnection(connectionString: primaryURL, logger: logger)
        try admin.query("SELECT pg_reload_conf()")
        // The base backup is read by the server: it must be able to read the password file this process wrote.
        if getuid() == 0 {
            try FileManager.default.setAttributes(
                [.ownerAccountName: "postgres"],
                ofItemAtPath: data.appendingPathComponent("embedded.secret").path)
        }
        let standby = try TestDatabase.makeDedicatedCluster(label: "standby")
        let backup = Process()
        backup.executableURL = try EmbeddedPostgres.findBinaries().appendingPathComponent("pg_basebackup")
        backup.arguments = ["-d", primaryURL, "-D", standby.dataDirectory.path, "-R", "-X", "stream", "-c", "fast"]
        try backup.run()
        backup.waitUntilExit()
        XCTAssertEqual(backup.terminationStatus, 0, "pg_basebackup")
        return (standby, try standby.start())
    }

    func testReadsAreCountedByWhatTheNodeIsAndAnIdleStandbyStaysInUse() async throws {
        let primary = try TestDatabase.makeDedicatedCluster(label: "primary")
        let primaryURL = try primary.start()
        defer { try? primary.stop() }
        let migrated = try await migratedPool(primaryURL)
        migrated.shutdown()
        let (standby, standbyURL) = try makeStandby(of: primary)
        defer { try? standby.stop() }
        let app = try await TestApp.start(databaseURL: primaryURL) {
            $0.databaseReadURLs = [standbyURL]
            $0.replicaCheckInterval = .milliseconds(100)
            // Above a loaded machine's pauses in replay, below the idle stretch checked next.
            $0.replicaMaxLag = .seconds(2)
        }
        defer { Task { await app.stop() } }
        _ = try await app.insertQuotes(["Streamed to the standby"])
        var use = app.application.context.readPool.replicaUse
        for _ in 0..<150 where use?.healthy != [true] || use?.standby != [true] {  // at most ~15 s
            try await Task.sleep(for: .milliseconds(100))
            use = app.application.context.readPool.replicaUse
        }
        XCTAssertEqual(use?.standby, [true], "the read URL leads to a node in recovery")
        XCTAssertEqual(use?.healthy, [true])

        // An idle cluster: the standby stays in use, check after check (each 100 ms, for twice the bound of 2 s).
        for _ in 0..<40 {
            XCTAssertEqual(app.application.context.readPool.replicaUse?.healthy, [true], "an idle standby does not lag")
            XCTAssertEqual(try app.client.get("/v1/quotes").status, 200)
            try await Task.sleep(for: .milliseconds(100))
        }
        let served = try XCTUnwrap(app.application.context.readPool.replicaUse)
        XCTAssertGreaterThan(served.replicaReads, 0)
        var metrics = try app.client.get("/metrics").text
        XCTAssertTrue(metrics.contains("db_read_nodes_in_use{role=\"replica\"} 1"), metrics)
        XCTAssertFalse(metrics.contains("db_reads_served{served_by=\"replica\"} 0"), metrics)

        // A failover: the read URL now leads to a primary, and /metrics says so.
        let promoted = try PGConnection(connectionString: standbyURL, logger: logger)
        try promoted.query("SELECT pg_promote()")
        use = app.application.context.readPool.replicaUse
        for _ in 0..<150 where use?.standby != [false] {
            try await Task.sleep(for: .milliseconds(100))
            use = app.application.context.readPool.replicaUse
        }
        XCTAssertEqual(use?.standby, [false])
        let before = try XCTUnwrap(app.application.context.readPool.replicaUse)
        for _ in 0..<5 { XCTAssertEqual(try app.client.get("/v1/quotes").status, 200) }
        let after = try XCTUnwrap(app.application.context.readPool.replicaUse)
        XCTAssertEqual(after.replicaReads, before.replicaReads, "reads from the promoted node count as a primary's")
        XCTAssertGreaterThanOrEqual(after.primaryReads, before.primaryReads + 5)
        metrics = try app.client.get("/metrics").text
        XCTAssertTrue(metrics.contains("db_read_nodes_in_use{role=\"primary\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("db_read_nodes_in_use{role=\"replica\"} 0"), metrics)
    }

    /// A failover under way: the replica monitor has taken the read node out (here: it was down at the monitor's one
    /// check), and the primary is gone. Public reads go on from the standby, the instance stays in rotation, writes
    /// answer 503.
    func testWithThePrimaryGoneReadsAreRetriedOnAReadNodeTheMonitorTookOut() async throws {
        let primary = try TestDatabase.makeDedicatedCluster(label: "primary")
        let primaryURL = try primary.start()
        defer { try? primary.stop() }
        let migrated = try await migratedPool(primaryURL)
        let quote = try await migrated.withConnection {
            try Self.insertQuoteOfTheDay("Kept by the standby", author: "Standby Author", $0)
        }
        migrated.shutdown()
        let (standby, standbyURL) = try makeStandby(of: primary)
        defer { try? standby.stop() }
        try standby.stop()
        // One check, at start, while the standby is down: the monitor keeps it out for the whole test.
        let app = try await TestApp.start(databaseURL: primaryURL) {
            $0.databaseReadURLs = [standbyURL]
            $0.replicaCheckInterval = .seconds(3600)
        }
        defer { Task { await app.stop() } }
        let user = try await app.makeUser()
        _ = try standby.start()
        // The standby has replayed the quote (it was in the base backup) once it accepts connections.
        let check = try PGConnection(connectionString: standbyURL, logger: logger)
        let copies = try check.query("SELECT count(*) AS n FROM quotes WHERE id = \(quote)")[0].decode(
            "n", as: Int.self)
        XCTAssertEqual(copies, 1)
        XCTAssertEqual(app.application.context.readPool.replicaUse?.healthy, [false], "the monitor took the node out")

        try primary.stop()
        let ready = try app.client.get("/ready")
        XCTAssertEqual(ready.status, 200, "a load balancer keeps the instance for reads")
        XCTAssertEqual(ready.text, #"{"status":"ready","primary":"unavailable"}"#)
        let page = try app.client.get("/v1/quotes")
        XCTAssertEqual(page.status, 200, page.text)
        XCTAssertEqual(try page.items().compactMap { $0["text"] as? String }, ["Kept by the standby"])
        XCTAssertEqual(try app.client.get("/v1/quotes/\(quote)").status, 200)
        let search = try app.client.get("/v1/quotes/search?q=standby")
        XCTAssertEqual(search.status, 200, search.text)
        XCTAssertEqual(try search.items().compactMap { $0["text"] as? String }, ["Kept by the standby"])
        let categories = try app.client.get("/v1/categories")
        XCTAssertEqual(categories.status, 200, categories.text)
        XCTAssertTrue(categories.text.contains("wisdom"), categories.text)
        let stored = try app.client.get("/v1/qotd?date=2020-02-02")
        XCTAssertEqual(stored.status, 200, stored.text)
        XCTAssertTrue(stored.text.contains("Kept by the standby"), stored.text)
        let write = try app.client.send("PUT", "/v1/favorites/\(quote)", headers: user.authorization)
        XCTAssertEqual(write.status, 503, "writes wait for a primary")
        XCTAssertNotNil(write.header("Retry-After"), "a 503 says when to retry")

        // With every node gone, reads and readiness fail plainly.
        try standby.stop()
        XCTAssertEqual(try app.client.get("/v1/quotes").status, 503)
        XCTAssertEqual(try app.client.get("/ready").status, 503)
    }

    func testAReadOnlyRefusalIsAnsweredAs503() {
        let refused = PGError(
            kind: .server, sqlState: .readOnlySQLTransaction,
            message: "cannot execute INSERT in a read-only transaction")
        XCTAssertEqual(Failure(classifying: refused).status, 503)
    }
}
