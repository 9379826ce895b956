import ArgumentParser
import Foundation
import Logging
import QuoteAPI
import QuoteApp
import QuoteVault

/// Applies pending migrations, then serves HTTP until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Migrate, then serve HTTP (the default command).")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let logger = try options.makeLogger()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        let schedule = try BackupSchedule.parse(options.value(options.backupSchedule, "BACKUP_SCHEDULE"))
        let database = try Database.open(options, logger: logger)
        defer { database.close(logger: logger) }
        let configuration = try AppConfigurationBuilder.build(options, database: database)
        let application = try Application.build(configuration: configuration, logger: logger)
        let backups = startBackups(database, schedule: schedule, application: application, logger: logger)
        if backups != nil, try await PreMigrationBackup.isDue(application) {
            _ = try await TakeBackup.run(
                .incr, database, dataDirectory: options.resolvedDataDirectory,
                reason: "before migrating", logger: logger)
        }
        try await application.migrate()
        try await application.rebaseAvatarURLs()
        try application.start()
        let scheduler = Task { await backups?.run() }
        defer { scheduler.cancel() }
        let switching = Task { await walSwitcher(database, backups: backups, application: application)?.run() }
        defer { switching.cancel() }
        let signal = await signals.next()
        logger.info("shutting down", metadata: ["signal": .stringConvertible(signal)])
        if signal == SIGTERM, configuration.shutdownDrain > .zero {
            await application.drain(for: configuration.shutdownDrain)
        }
        await application.shutdown()
        logger.info("stopped")
    }

    /// With WAL archiving working: commits reach the archive within `archive_timeout` (half of it between passes).
    private func walSwitcher(_ database: Database, backups: BackupScheduler?, application: Application) -> WALSwitcher?
    {
        guard backups != nil, let backRest = database.backups else { return nil }
        return WALSwitcher(
            pool: application.context.pool, interval: .seconds(max(1, backRest.settings.archiveTimeout / 2)),
            logger: application.context.logger)
    }

    /// Embedded mode with backups: creates the stanza (first start), backs up an existing database that a
    /// migration is about to change, and returns the schedule to run.
    private func startBackups(
        _ database: Database, schedule: BackupSchedule?, application: Application,
        logger: Logger
    ) -> BackupScheduler? {
        guard let backRest = database.backups, let cluster = database.cluster, let port = cluster.port,
            let password = cluster.password
        else { return nil }
        BackupSetup.warnIfSameFileSystem(backRest, logger: logger)
        do {
            try backRest.createStanza(port: port, password: password)
        } catch {
            logger.error("backups are not working: the repository cannot be used", metadata: ["error": "\(error)"])
            return nil
        }
        logger.info(
            "WAL archiving on",
            metadata: [
                "repository": .string(backRest.settings.repositoryDescription),
                "archive_timeout_seconds": .stringConvertible(backRest.settings.archiveTimeout),
            ])
        return BackupScheduler(
            schedule: schedule, database: database, dataDirectory: options.resolvedDataDirectory,
            status: application.context.metrics.backups, pool: application.context.pool, logger: logger)
    }
}
