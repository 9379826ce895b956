import Foundation
import PGClient
import TestSupport
import XCTest

/// `quote-server backup`, `backups` and `restore` on an embedded database with its pgBackRest repository, and
/// the refusals that change nothing.
final class BackupCommandTests: XCTestCase {
    /// The restore drill: a backup, more writes up to T, the accident; back to T; then the data lost whole and
    /// restored to the latest archived state.
    func testPointInTimeRestoreUndoesTheAccidentAndLatestRestoreKeepsEveryAcknowledgedWrite() async throws {
        let data = try EmbeddedDataDirectory()
        defer { data.cleanUp() }
        let environment = data.environment(["BACKUP_SCHEDULE": "off"])
        var server = try ServerProcess(["serve"], environment: environment)
        var port = try await server.waitForPort(timeout: .seconds(120))
        let quotes = try await Self.insertQuotes(60, data)
        let token = try Self.signUp(HTTPTestClient(port: port))
        var acknowledged = try Self.favorite(quotes[0..<20], token: token, port: port)

        let backup = try await Self.run(["backup", "--type", "full"], environment)
        XCTAssertEqual(backup.status, 0, backup.output)
        XCTAssertTrue(backup.output.contains("full backup"), backup.output)
        // Restorable times start the second after the backup's stop (kept in whole seconds): T comes later.
        try await Task.sleep(for: .seconds(1.1))
        acknowledged += try Self.favorite(quotes[20..<40], token: token, port: port)
        let connection = try PGConnection(connectionString: try data.databaseURL())
        let now = try connection.query(
            """
            SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t
            """)
        let beforeAccident = try now[now.startIndex].decode("t", as: String.self)
        try connection.query("DELETE FROM user_favorites")  // the accident

        // Refusals while the server runs and while a backup holds the lock: nothing changes.
        let lock = try FileLock(data.data.appendingPathComponent("backup.lock"))
        let second = try await Self.run(["backup"], environment)
        XCTAssertEqual(second.status, 1, second.output)
        XCTAssertTrue(second.output.contains("another backup or restore is running"), second.output)
        lock.release()
        let whileServing = try await Self.run(["restore", "--latest"], environment)
        XCTAssertEqual(whileServing.status, 1, whileServing.output)
        XCTAssertTrue(whileServing.output.contains("a server is running"), whileServing.output)
        XCTAssertEqual(try HTTPTestClient(port: port).get("/ready").status, 200)
        XCTAssertEqual(try Self.favoriteCount(connection), 0)
        server.signal(SIGTERM)
        var status = try await server.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, server.output)

        let listing = try await Self.run(["backups"], environment)
        XCTAssertEqual(listing.status, 0, listing.output)
        XCTAssertTrue(listing.output.contains(" full "), listing.output)
        let rangeLine = try XCTUnwrap(listing.output.split(separator: "\n").first { $0.hasPrefix("restorable: ") })
        let range = try XCTUnwrap(rangeLine.dropFirst("restorable: ".count).components(separatedBy: " (").first)
        let outside = try await Self.run(["restore", "--to", "2000-01-01T00:00:00Z"], environment)
        XCTAssertEqual(outside.status, 1, outside.output)
        XCTAssertTrue(outside.output.contains("outside the restorable range, \(range)"), outside.output)
        XCTAssertEqual(try Self.asides(data), [], "nothing moved")

        let restored = try await Self.run(["restore", "--to", beforeAccident], environment)
        XCTAssertEqual(restored.status, 0, restored.output)
        XCTAssertEqual(try Self.asides(data).count, 1, "the previous data directory is kept")
        server = try ServerProcess(["serve"], environment: environment)
        port = try await server.waitForPort(timeout: .seconds(120))
        XCTAssertEqual(
            try Self.favoriteIDs(try data.databaseURL()), Set(quotes[0..<40]),
            "every favorite written before T is back, the accident is not")
        acknowledged += try Self.favorite(quotes[40..<60], token: token, port: port)
        server.signal(SIGTERM)
        status = try await server.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, server.output)

        // The disk is lost: the whole data directory goes; the repository is elsewhere.
        try FileManager.default.removeItem(at: data.data)
        let latest = try await Self.run(["restore", "--latest"], environment)
        XCTAssertEqual(latest.status, 0, latest.output)
        server = try ServerProcess(["serve"], environment: environment)
        _ = try await server.waitForPort(timeout: .seconds(120))
        XCTAssertEqual(acknowledged, 60)
        XCTAssertEqual(try Self.favoriteIDs(try data.databaseURL()), Set(quotes), "every acknowledged write")
        server.signal(SIGTERM)
        status = try await server.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, server.output)

        // A corrupt repository: listed and restored from, it is refused and the data stays.
        let info = data.repository.appendingPathComponent("backup/quotevault")
        for name in ["backup.info", "backup.info.copy"] {
            try Data("not pgBackRest's\n".utf8).write(to: info.appendingPathComponent(name))
        }
        let unreadable = try await Self.run(["backups"], environment)
        XCTAssertEqual(unreadable.status, 1, unreadable.output)
        XCTAssertTrue(unreadable.output.contains(data.repository.path), unreadable.output)
        let before = try FileManager.default.contentsOfDirectory(atPath: data.data.path).sorted()
        let refused = try await Self.run(["restore", "--latest"], environment)
        XCTAssertEqual(refused.status, 1, refused.output)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: data.data.path).sorted(), before)
        XCTAssertTrue(FileManager.default.fileExists(atPath: data.cluster.appendingPathComponent("PG_VERSION").path))
    }

    func testMissingRepositoryAndBadInputAreRefusedBeforeAnythingChanges() async throws {
        let data = try EmbeddedDataDirectory()
        defer { data.cleanUp() }
        let environment = data.environment()
        for arguments in [["backups"], ["backup"], ["restore", "--latest"]] {
            let result = try await Self.run(arguments, environment)
            XCTAssertEqual(result.status, 1, "\(arguments): \(result.output)")
            XCTAssertTrue(result.output.contains(data.repository.path), "\(arguments): \(result.output)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: data.repository.path), "no repository made")
        XCTAssertFalse(FileManager.default.fileExists(atPath: data.cluster.path), "no database made")
        let usage: [([String], String)] = [
            (["backup", "--type", "weekly"], "--type"), (["restore"], "--latest"),
            (["restore", "--latest", "--to", "2026-01-01T00:00:00Z"], "--latest"),
            (["restore", "--to", "yesterday"], "ISO 8601"),
        ]
        for (arguments, expected) in usage {
            let result = try await Self.run(arguments, environment)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.output.contains(expected), "\(arguments): \(result.output)")
        }
        let settings = [
            ("BACKUP_SCHEDULE", "hourly"), ("BACKUP_SCHEDULE", "full=30s"), ("BACKUP_SCHEDULE", "weekly=1d"),
            ("BACKUP_RETENTION", "0"), ("BACKUP_RETENTION", "many"),
        ]
        for (variable, value) in settings {
            let server = try ServerProcess(["serve"], environment: environment.merging([variable: value]) { $1 })
            let status = try await server.waitForExit(timeout: .seconds(120))
            XCTAssertNotEqual(status, 0, "\(variable)=\(value)")
            XCTAssertTrue(server.output.contains(variable), server.output)
        }
        let configured = try await Self.run(["backups"], ["DATABASE_URL": "postgresql://127.0.0.1:1/none"])
        XCTAssertNotEqual(configured.status, 0)
        XCTAssertTrue(configured.output.contains("embedded database"), configured.output)
    }

    /// The server backs up on its own (a full backup at once when there is none), before a migration changes
    /// an existing database, and reports backups in /metrics.
    func testServerSchedulesBackupsBacksUpBeforeMigratingAndReportsInMetrics() async throws {
        let data = try EmbeddedDataDirectory()
        defer { data.cleanUp() }
        var server = try ServerProcess(["serve"], environment: data.environment())
        var port = try await server.waitForPort(timeout: .seconds(120))
        var metrics: [String: Double] = [:]
        for _ in 0..<600 where metrics["backup_last_success_timestamp_seconds"] == nil {
            try await Task.sleep(for: .milliseconds(200))
            metrics = try Self.backupMetrics(port)
        }
        XCTAssertNotNil(metrics["backup_last_success_timestamp_seconds"], server.output)
        XCTAssertGreaterThan(metrics["backup_last_size_bytes{of=\"database\"}"] ?? 0, 1_000_000)
        XCTAssertGreaterThan(metrics["backup_last_size_bytes{of=\"repository\"}"] ?? 0, 0)
        XCTAssertEqual(
            metrics["backup_oldest_restorable_timestamp_seconds"],
            metrics["backup_last_success_timestamp_seconds"].map { $0 + 1 }, "one backup: it is the oldest")
        XCTAssertTrue(server.output.contains("same file system"), "the repository shares /tmp's disk: warned")
        // The archive-failure count is read on the schedule's next pass.
        for _ in 0..<600 where metrics["wal_archive_failures_total"] == nil {
            try await Task.sleep(for: .milliseconds(200))
            metrics = try Self.backupMetrics(port)
        }
        XCTAssertEqual(metrics["wal_archive_failures_total"], 0)
        server.signal(SIGTERM)
        var status = try await server.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, server.output)

        // A new migration for the existing database: a backup is taken first.
        let migrations = data.root.appendingPathComponent("migrations")
        try FileManager.default.copyItem(at: Self.migrationsDirectory, to: migrations)
        try "CREATE TABLE backup_test_marker (id int);\n".write(
            to: migrations.appendingPathComponent("9999_backup_test_marker.sql"), atomically: true, encoding: .utf8)
        server = try ServerProcess(
            ["serve"],
            environment: data.environment([
                "MIGRATIONS_DIR": migrations.path, "BACKUP_SCHEDULE": "off",
            ]))
        port = try await server.waitForPort(timeout: .seconds(120))
        let output = server.output
        let backupLine = try XCTUnwrap(output.range(of: #""reason":"before migrating""#), output)
        let migrationLine = try XCTUnwrap(output.range(of: "backup_test_marker"), output)
        XCTAssertLessThan(backupLine.lowerBound, migrationLine.lowerBound, "the backup comes first")
        XCTAssertTrue(output.contains("backup finished"), output)
        server.signal(SIGTERM)
        status = try await server.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, server.output)
        let listing = try await Self.run(["backups"], data.environment())
        XCTAssertEqual(listing.output.split(separator: "\n").filter { $0.contains(" incr ") }.count, 1, listing.output)
    }

    /// SIGTERM while the first scheduled backup runs: the server exits cleanly, and the backup the stopping database
    /// cut short is not logged as a failure (it was, as an error, with a warning after it).
    func testShutdownDuringAScheduledBackupLogsNoFailure() async throws {
        let data = try EmbeddedDataDirectory()
        defer { data.cleanUp() }
        let server = try ServerProcess(["serve"], environment: data.environment())
        _ = try await server.waitForPort(timeout: .seconds(120))
        let started = #""msg":"backup started""#
        for _ in 0..<1200 where !server.output.contains(started) { try await Task.sleep(for: .milliseconds(25)) }
        XCTAssertTrue(server.output.contains(started), server.output)
        server.signal(SIGTERM)
        let status = try await server.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(status, 0, server.output)
        if server.output.contains(#""msg":"backup finished""#) {
            throw XCTSkip("the backup finished before the signal reached the server")
        }
        XCTAssertFalse(server.output.contains(#""level":"error""#), server.output)
        XCTAssertFalse(server.output.contains("cannot read the backup repository"), server.output)
    }

    // MARK: Helpers

    private static let migrationsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("migrations")

    private static func run(_ arguments: [String], _ environment: [String: String]) async throws -> (
        status: Int32?, output: String
    ) {
        let process = try ServerProcess(arguments, environment: environment)
        let status = try await process.waitForExit(timeout: .seconds(300))
        return (status, process.output)
    }

    private static func insertQuotes(_ count: Int, _ data: EmbeddedDataDirectory) async throws -> [UUID] {
        let connection = try PGConnection(connectionString: try data.databaseURL())
        let rows = try connection.query(
            """
            INSERT INTO quotes (text, author, category)
            SELECT 'Drill quote ' || n, 'Drill', 'wisdom' FROM generate_series(1, \(count)) AS n
            RETURNING id
            """)
        return try rows.map { try $0.decode("id", as: UUID.self) }
    }

    private static func signUp(_ client: HTTPTestClient) throws -> String {
        let session = try client.send(
            "POST", "/v1/auth/signup", json: ["email": "drill@example.com", "password": "correct horse"])
        return try XCTUnwrap(try session.jsonObject()["access_token"] as? String, session.text)
    }

    /// Favorites each quote over HTTP; returns how many the server acknowledged.
    private static func favorite(_ quotes: ArraySlice<UUID>, token: String, port: Int) throws -> Int {
        let client = HTTPTestClient(port: port)
        return try quotes.filter { id in
            try client.send(
                "PUT", "/v1/favorites/\(id.uuidString.lowercased())",
                headers: ["Authorization": "Bearer \(token)"]
            ).status == 201
        }.count
    }

    private static func favoriteCount(_ connection: PGConnection) throws -> Int {
        let rows = try connection.query("SELECT count(*)::int AS n FROM user_favorites")
        return try rows[rows.startIndex].decode("n", as: Int.self)
    }

    private static func favoriteIDs(_ url: String) throws -> Set<UUID> {
        let connection = try PGConnection(connectionString: url)
        return Set(
            try connection.query("SELECT quote_id FROM user_favorites").map { try $0.decode("quote_id", as: UUID.self) }
        )
    }

    private static func asides(_ data: EmbeddedDataDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: data.data.path).filter { $0.hasPrefix("postgres.") }
    }

    /// The backup series of /metrics, by name with labels.
    private static func backupMetrics(_ port: Int) throws -> [String: Double] {
        let text = try HTTPTestClient(port: port).get("/metrics").text
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("backup_") || line.hasPrefix("wal_archive") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}

/// An exclusive flock(2) held by the test, as a running backup holds it.
private final class FileLock {
    private var descriptor: Int32

    init(_ file: URL) throws {
        descriptor = open(file.path, O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { throw HTTPTestError.timedOut }
    }

    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
