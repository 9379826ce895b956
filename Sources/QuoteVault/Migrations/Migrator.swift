import Foundation
import Logging
import PGClient

/// Applies pending migrations, each in its own transaction, recorded with a checksum in `schema_migrations`; then,
/// when any file of `schema/` changed, re-creates their schema from all of them in one transaction, recorded with
/// checksums in `schema_definitions`.
///
/// Several instances may start at once: a session-level advisory lock makes them take turns, so each
/// migration is applied exactly once and the others find it recorded.
public struct Migrator: Sendable {
    public let migrations: [Migration]
    /// Applied after the migrations, which they may use (none: the migrations alone, as some tests want).
    public let definitions: [SchemaDefinition]
    private let logger: Logger

    /// An arbitrary constant that names "the QuoteVault schema" among advisory locks.
    static let advisoryLockKey: Int64 = 0x5156_4D49_4752_4154

    public init(migrations: [Migration], definitions: [SchemaDefinition] = [], logger: Logger) {
        self.migrations = migrations
        self.definitions = definitions
        self.logger = logger
    }

    /// The migrations of `directory` and the definitions of the `schema` directory beside it.
    public init(migrationsDirectory directory: URL, logger: Logger) throws {
        self.init(
            migrations: try Migration.load(from: directory),
            definitions: try SchemaDefinition.load(
                from: try SchemaDefinition.locateDirectory(besideMigrations: directory)),
            logger: logger)
    }

    /// Applies what is pending; returns the versions it applied.
    @discardableResult
    public func migrate(using pool: PGPool) async throws -> [String] {
        let migrations = self.migrations
        let definitions = self.definitions
        let logger = self.logger
        return try await pool.withConnection { connection in
            try connection.withoutWaitLimit { connection in
                // Waiting for another instance's migrations, and the migrations themselves, may take longer than the
                // pool's statement timeout: lifted here (and the pool's watch on waits), put back after.
                let timeout = try connection.query("SELECT current_setting('statement_timeout') AS value")[0].decode(
                    "value", as: String.self)
                try connection.query("SELECT set_config('statement_timeout', '0', false)")
                defer { _ = try? connection.query("SELECT set_config('statement_timeout', \(timeout), false)") }
                try connection.query("SELECT pg_advisory_lock(\(Self.advisoryLockKey))")
                defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))") }
                try connection.execute(
                    unsafeSQL: """
                        CREATE TABLE IF NOT EXISTS schema_migrations (
                            version    text PRIMARY KEY,
                            name       text NOT NULL,
                            checksum   text NOT NULL,
                            applied_at timestamptz NOT NULL DEFAULT now()
                        )
                        """)
                let applied = try Self.appliedChecksums(connection)
                var appliedNow: [String] = []
                for migration in migrations {
                    let checksum = try Self.checksum(of: migration.sql, connection)
                    if let recorded = applied[migration.version] {
                        guard recorded == checksum else {
                            throw MigrationError.checksumMismatch(version: migration.version, name: migration.name)
                        }
                        continue
                    }
                    try connection.transaction { connection in
                        try connection.execute(unsafeSQL: migration.sql)
                        try connection.query(
                            """
                            INSERT INTO schema_migrations (version, name, checksum)
                            VALUES (\(migration.version), \(migration.name), \(checksum))
                            """)
                    }
                    logger.info(
                        "applied migration",
                        metadata: ["version": .string(migration.version), "name": .string(migration.name)])
                    appliedNow.append(migration.version)
                }
                if !definitions.isEmpty { try Self.apply(definitions, connection, logger: logger) }
                return appliedNow
            }
        }
    }

    /// True when every known migration is recorded with the same content (used by `/ready`).
    public func isCurrent(using pool: PGPool) async throws -> Bool {
        let migrations = self.migrations
        let definitions = self.definitions
        return try await pool.withConnection { connection in
            let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
            guard try exists.first?.decode("present", as: Bool.self) == true else { return false }
            let applied = try Self.appliedChecksums(connection)
            guard migrations.allSatisfy({ applied[$0.version] != nil }) else { return false }
            let recorded = try Self.recordedDefinitions(connection)
            return definitions.allSatisfy { recorded[$0.name] != nil }
        }
    }

    /// Re-creates the definitions' schema from all of them unless every file is recorded with its checksum and
    /// the schema exists. Dropping the whole schema first means a removed or re-typed function leaves nothing
    /// behind; nothing outside the schema depends on it, so `CASCADE` reaches no further.
    private static func apply(_ definitions: [SchemaDefinition], _ connection: PGConnection, logger: Logger) throws {
        try connection.execute(
            unsafeSQL: """
                CREATE TABLE IF NOT EXISTS schema_definitions (
                    name       text PRIMARY KEY,
                    checksum   text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
        var checksums: [String: String] = [:]
        for definition in definitions { checksums[definition.name] = try checksum(of: definition.sql, connection) }
        let schema = SchemaDefinition.schemaName
        let present = try connection.query("SELECT to_regnamespace(\(schema)) IS NOT NULL AS present")
        if try present[present.startIndex].decode("present", as: Bool.self),
            try recordedDefinitions(connection) == checksums
        {
            return
        }
        try connection.transaction { connection in
            // `schema` is a constant of this program, not input.
            try connection.execute(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE; CREATE SCHEMA \(schema)")
            for definition in definitions { try connection.execute(unsafeSQL: definition.sql) }
            try connection.query("DELETE FROM schema_definitions")
            for definition in definitions {
                try connection.query(
                    """
                    INSERT INTO schema_definitions (name, checksum)
                    VALUES (\(definition.name), \(checksums[definition.name]))
                    """)
            }
        }
        logger.info(
            "applied schema definitions",
            metadata: ["schema": .string(schema), "files": .stringConvertible(definitions.count)])
    }

    private static func recordedDefinitions(_ connection: PGConnection) throws -> [String: String] {
        let exists = try connection.query("SELECT to_regclass('schema_definitions') IS NOT NULL AS present")
        guard try exists.first?.decode("present", as: Bool.self) == true else { return [:] }
        var recorded: [String: String] = [:]
        for row in try connection.query("SELECT name, checksum FROM schema_definitions") {
            recorded[try row.decode("name", as: String.self)] = try row.decode("checksum", as: String.self)
        }
        return recorded
    }

    private static func appliedChecksums(_ connection: PGConnection) throws -> [String: String] {
        var applied: [String: String] = [:]
        for row in try connection.query("SELECT version, checksum FROM schema_migrations") {
            applied[try row.decode("version", as: String.self)] = try row.decode("checksum", as: String.self)
        }
        return applied
    }

    /// SHA-256 of a file's text, computed by PostgreSQL so no other hashing code is needed here.
    private static func checksum(of sql: String, _ connection: PGConnection) throws -> String {
        let rows = try connection.query("SELECT encode(sha256(convert_to(\(sql), 'UTF8')), 'hex') AS checksum")
        return try rows[rows.startIndex].decode("checksum", as: String.self)
    }
}
