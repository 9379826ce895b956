import PGClient
import QuoteAPI

/// A backup is taken before migrations change an existing database: one with migrations recorded and some
/// pending. A new database (nothing recorded) has nothing to lose.
enum PreMigrationBackup {
    static func isDue(_ application: Application) async throws -> Bool {
        let recorded = try await application.context.pool.withConnection { connection in
            let table = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
            guard try table[table.startIndex].decode("present", as: Bool.self) else { return false }
            let rows = try connection.query("SELECT EXISTS (SELECT 1 FROM schema_migrations) AS present")
            return try rows[rows.startIndex].decode("present", as: Bool.self)
        }
        guard recorded else { return false }
        return try await !application.context.migrator.isCurrent(using: application.context.pool)
    }
}
