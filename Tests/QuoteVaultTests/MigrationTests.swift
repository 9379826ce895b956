import Foundation
import Logging
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// Ordered, checksummed, transactional migrations that several instances may run at once.
final class MigrationTests: XCTestCase {
    private let logger = Logger(label: "test")

    private func directory(_ files: [String: String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, sql) in files {
            try sql.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return url
    }

    private func appliedVersions(_ pool: PGPool) async throws -> [String] {
        try await pool.withConnection { connection in
            try connection.query("SELECT version FROM schema_migrations ORDER BY version").map {
                try $0.decode("version", as: String.self)
            }
        }
    }

    func testTheRepositoryMigrationsApplyOnceAndInOrder() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 2, logger: logger)
        defer { pool.shutdown() }
        let migrations = try Migration.load(from: TestApp.repositoryRoot.appendingPathComponent("migrations"))
        XCTAssertFalse(migrations.isEmpty)
        XCTAssertEqual(migrations.map(\.version), migrations.map(\.version).sorted())
        let migrator = Migrator(migrations: migrations, logger: logger)
        let first = try await migrator.migrate(using: pool)
        XCTAssertEqual(first, migrations.map(\.version))
        let second = try await migrator.migrate(using: pool)
        XCTAssertEqual(second, [])
        let isCurrent = try await migrator.isCurrent(using: pool)
        XCTAssertTrue(isCurrent)
    }

    func testConcurrentInstancesApplyEachMigrationExactlyOnce() async throws {
        let url = try TestDatabase.makeDatabase()
        let migrations = try Migration.load(from: TestApp.repositoryRoot.appendingPathComponent("migrations"))
        let logger = self.logger
        let appliedCounts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let pool = PGPool(connectionString: url, size: 1, logger: logger)
                    defer { pool.shutdown() }
                    return try await Migrator(migrations: migrations, logger: logger).migrate(using: pool).count
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(appliedCounts.reduce(0, +), migrations.count, "each migration applied by exactly one instance")
        let pool = PGPool(connectionString: url, size: 1, logger: logger)
        defer { pool.shutdown() }
        let versions = try await appliedVersions(pool)
        XCTAssertEqual(versions, migrations.map(\.version))
    }

    func testAChangedAppliedMigrationIsAnError() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 1, logger: logger)
        defer { pool.shutdown() }
        let folder = try directory(["0001_first.sql": "CREATE TABLE first (id int);"])
        try await Migrator(migrations: try Migration.load(from: folder), logger: logger).migrate(using: pool)
        try "CREATE TABLE first (id bigint);".write(
            to: folder.appendingPathComponent("0001_first.sql"), atomically: true, encoding: .utf8)
        do {
            try await Migrator(migrations: try Migration.load(from: folder), logger: logger).migrate(using: pool)
            XCTFail("a changed migration must not be skipped")
        } catch let error as MigrationError {
            XCTAssertEqual(error, .checksumMismatch(version: "0001", name: "first"))
        }
    }

    func testAFailingMigrationLeavesNothingBehind() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 1, logger: logger)
        defer { pool.shutdown() }
        let folder = try directory([
            "0001_good.sql": "CREATE TABLE good (id int);",
            "0002_bad.sql": "CREATE TABLE half_done (id int); SELECT no_such_function();",
        ])
        do {
            try await Migrator(migrations: try Migration.load(from: folder), logger: logger).migrate(using: pool)
            XCTFail("the bad migration must fail")
        } catch is PGError {}
        let versions = try await appliedVersions(pool)
        XCTAssertEqual(versions, ["0001"])
        let halfDone = try await pool.withConnection { connection in
            try connection.query("SELECT to_regclass('half_done') IS NULL AS absent")[0].decode("absent", as: Bool.self)
        }
        XCTAssertTrue(halfDone, "the failed migration's statements were rolled back")
    }

    func testAMigrationMayRunPastThePoolsStatementTimeout() async throws {
        // The pool cancels a wait longer than its statement timeout plus a second; a migration lifts both.
        let url = try TestDatabase.makeDatabase()
        let migrations = try Migration.load(from: try directory(["0001_slow.sql": "SELECT pg_sleep(1.6);"]))
        let pool = PGPool(connectionString: url, size: 1, statementTimeout: .milliseconds(200), logger: logger)
        defer { pool.shutdown() }
        let applied = try await Migrator(migrations: migrations, logger: logger).migrate(using: pool)
        XCTAssertEqual(applied, ["0001"])
        do {
            try await pool.query("SELECT pg_sleep(1.6)")
            XCTFail("outside a migration the statement timeout holds")
        } catch let error as PGError {
            XCTAssertEqual(error.sqlState, .queryCanceled)
        }
    }

    func testBadFileNamesAreRefused() throws {
        let folder = try directory(["first.sql": "SELECT 1;"])
        XCTAssertThrowsError(try Migration.load(from: folder)) { error in
            XCTAssertEqual(error as? MigrationError, .badFileName("first.sql"))
        }
    }
}
