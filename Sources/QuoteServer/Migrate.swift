import ArgumentParser
import Logging
import PGClient
import QuoteAPI
import QuoteVault

/// Applies pending migrations and exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations and exit.")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let logger = try options.makeLogger()
        let database = try Database.open(options, logger: logger)
        defer { database.close(logger: logger) }
        let directory = try Migration.locateDirectory(explicit: options.value(options.migrationsDir, "MIGRATIONS_DIR"))
        let pool = PGPool(connectionString: database.url, size: 1, logger: logger)
        defer { pool.shutdown() }
        let applied = try await Migrator(migrations: try Migration.load(from: directory), logger: logger).migrate(
            using: pool)
        logger.info("migrations applied", metadata: ["count": .stringConvertible(applied.count)])
    }
}
