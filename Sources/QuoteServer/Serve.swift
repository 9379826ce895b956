import ArgumentParser
import Foundation
import Logging
import QuoteAPI
import QuoteVault

/// Applies pending migrations, then serves HTTP until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Migrate, then serve HTTP (the default command).")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let logger = try options.makeLogger()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        let database = try Database.open(options, logger: logger)
        defer { database.close(logger: logger) }
        let configuration = try AppConfigurationBuilder.build(options, database: database)
        let application = try Application.build(configuration: configuration, logger: logger)
        try await application.migrate()
        try await application.rebaseAvatarURLs()
        try application.start()
        let signal = await signals.next()
        logger.info("shutting down", metadata: ["signal": .stringConvertible(signal)])
        if signal == SIGTERM, configuration.shutdownDrain > .zero { await application.drain(for: configuration.shutdownDrain) }
        await application.shutdown()
        logger.info("stopped")
    }
}
