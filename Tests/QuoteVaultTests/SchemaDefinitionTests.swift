import Foundation
import Logging
import PGClient
import QuoteVault
import TestSupport
import XCTest

/// `schema/`: re-created as a whole after the migrations when a file's checksum changed, left alone otherwise.
final class SchemaDefinitionTests: XCTestCase {
    private let logger = Logger(label: "test")
    private let migrations = TestApp.repositoryRoot.appendingPathComponent("migrations")

    /// The object id of `search.quote_search_tier`, which changes when the schema is re-created, and the time the
    /// definitions were recorded.
    private func state(_ pool: PGPool) async throws -> (oid: Int, recorded: [String]) {
        try await pool.withConnection { connection in
            let oid = try connection.query(
                "SELECT 'search.quote_search_tier(text, boolean, integer, text, text)'::regprocedure::oid::int8 AS oid"
            )[0].decode("oid", as: Int.self)
            let recorded = try connection.query(
                """
                SELECT name || ' ' || checksum || ' ' || applied_at::text AS line FROM schema_definitions ORDER BY name
                """
            ).map { try $0.decode("line", as: String.self) }
            return (oid, recorded)
        }
    }

    func testUnchangedDefinitionsAreNotAppliedAgain() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 1, logger: logger)
        defer { pool.shutdown() }
        let migrator = try Migrator(migrationsDirectory: migrations, logger: logger)
        XCTAssertFalse(migrator.definitions.isEmpty)
        try await migrator.migrate(using: pool)
        let first = try await state(pool)
        XCTAssertEqual(first.recorded.count, migrator.definitions.count)
        let applied = try await migrator.migrate(using: pool)
        XCTAssertEqual(applied, [])
        let second = try await state(pool)
        XCTAssertEqual(second.oid, first.oid, "the functions were not created again")
        XCTAssertEqual(second.recorded, first.recorded)
        let isCurrent = try await migrator.isCurrent(using: pool)
        XCTAssertTrue(isCurrent)
    }

    func testAChangedFileRecreatesTheSchemaAndARemovedFunctionGoes() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 1, logger: logger)
        defer { pool.shutdown() }
        let base = try Migrator(migrationsDirectory: migrations, logger: logger)
        try await base.migrate(using: pool)
        let before = try await state(pool)

        // One file changed (a function added to it): the whole schema is created again, with it.
        var definitions = base.definitions
        let last = definitions.removeLast()
        definitions.append(
            SchemaDefinition(
                name: last.name,
                sql: last.sql + "\nCREATE FUNCTION search.probe() RETURNS int LANGUAGE sql AS $$ SELECT 7 $$;\n"))
        let changed = Migrator(migrations: base.migrations, definitions: definitions, logger: logger)
        let staleIsCurrent = try await changed.isCurrent(using: pool)
        XCTAssertTrue(staleIsCurrent, "every file is recorded (by name), as migrations are by version")
        try await changed.migrate(using: pool)
        let after = try await state(pool)
        XCTAssertNotEqual(after.oid, before.oid, "every function was created again")
        XCTAssertNotEqual(after.recorded, before.recorded)
        let probe = try await pool.withConnection {
            try $0.query("SELECT search.probe() AS n")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(probe, 7)

        // Back to the repository's files: the function no file defines any more is gone, with no DROP written.
        try await base.migrate(using: pool)
        let gone = try await pool.withConnection {
            try $0.query("SELECT to_regproc('search.probe') IS NULL AS gone")[0].decode("gone", as: Bool.self)
        }
        XCTAssertTrue(gone)

        // A new file not recorded yet: not current until applied.
        let added = Migrator(
            migrations: base.migrations,
            definitions: base.definitions + [SchemaDefinition(name: "99_extra.sql", sql: "SELECT 1;")], logger: logger)
        let addedIsCurrent = try await added.isCurrent(using: pool)
        XCTAssertFalse(addedIsCurrent)
        try await added.migrate(using: pool)
        let appliedIsCurrent = try await added.isCurrent(using: pool)
        XCTAssertTrue(appliedIsCurrent)
    }

    func testTheSearchFunctionsLiveOnlyInTheirSchema() async throws {
        let pool = PGPool(connectionString: try TestDatabase.makeDatabase(), size: 1, logger: logger)
        defer { pool.shutdown() }
        try await Migrator(migrationsDirectory: migrations, logger: logger).migrate(using: pool)
        let (inSearch, inPublic) = try await pool.withConnection { connection in
            let row = try connection.query(
                """
                SELECT count(*) FILTER (WHERE n.nspname = 'search')::int8 AS in_search,
                       count(*) FILTER (WHERE n.nspname = 'public' AND p.proname IN (
                           SELECT s.proname FROM pg_proc s WHERE s.pronamespace = 'search'::regnamespace))::int8
                           AS in_public
                FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                """)[0]
            return (try row.decode("in_search", as: Int.self), try row.decode("in_public", as: Int.self))
        }
        XCTAssertEqual(inSearch, 23)
        XCTAssertEqual(inPublic, 0, "migration 0081 dropped the old definitions")
    }
}
