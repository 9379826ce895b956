import Foundation

/// One file of `schema/`: query-time functions and types, re-created as a whole into their own PostgreSQL schema
/// whenever a file's content changes (Flyway's repeatable `R__` files; Supabase CLI's `supabase/schemas/`).
///
/// Tables, indexes, triggers and the immutable functions indexes are built on are forward-only `Migration`s; what
/// only queries call lives here, so a changed signature needs no hand-written `DROP`.
public struct SchemaDefinition: Sendable, Equatable {
    /// The PostgreSQL schema the files are applied into, dropped and created again each time.
    public static let schemaName = "search"

    /// The file's name, e.g. `10_ranking.sql`; files apply in the order of their names.
    public let name: String
    public let sql: String

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }

    /// Reads every `*.sql` file of `directory`, ordered by name. None is an error: the server's searches need them.
    public static func load(from directory: URL) throws -> [SchemaDefinition] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
        guard !files.isEmpty else { throw MigrationError.schemaDirectoryEmpty(directory.path) }
        return try files.sorted().map { file in
            SchemaDefinition(
                name: file, sql: try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8))
        }
    }

    /// Finds the `schema` directory: beside `migrations` (a copy of both), else where `ResourceLocator` finds
    /// shipped files.
    public static func locateDirectory(besideMigrations migrations: URL) throws -> URL {
        let beside = migrations.deletingLastPathComponent().appendingPathComponent("schema")
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        if let found = ResourceLocator.find("schema") { return found }
        throw MigrationError.schemaDirectoryNotFound
    }
}
