import ArgumentParser
import Logging

/// Applies pending migrations and exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations and exit.")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let logger = try options.makeLogger()
        let applied = try await Database.withMigrated(options, logger: logger) { $1 }
        logger.info("migrations applied", metadata: ["count": .stringConvertible(applied.count)])
    }
}
