import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging

/// `quote-server backup [--type full|diff|incr]`: one backup of the embedded database, now.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up the embedded database into BACKUP_REPO (pgBackRest) and print what was made.",
        discussion: "An incremental or differential backup becomes a full one when the repository holds none.")

    @OptionGroup var options: ServerOptions
    @Option(help: "full, diff or incr.") var type: String = "incr"

    func validate() throws {
        guard BackupType(rawValue: type) != nil else { throw ValidationError("--type must be full, diff or incr") }
    }

    func run() async throws {
        let logger = try options.makeLogger()
        let backRest = try BackupSetup.require(options, logger: logger)
        try backRest.prepare()
        try backRest.requireWritableRepository()
        // A missing or unreadable repository is refused before the database is touched.
        _ = try backRest.info()
        let database = try Database.open(options, logger: logger)
        defer { database.close(logger: logger) }
        let record = try await TakeBackup.run(
            BackupType(rawValue: type)!, database,
            dataDirectory: options.resolvedDataDirectory, reason: "command",
            logger: logger)
        print(TakeBackup.describe(record))
    }
}
