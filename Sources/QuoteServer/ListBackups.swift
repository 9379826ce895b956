import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging

/// `quote-server backups`: what the repository holds and the times a restore can reach.
struct ListBackups: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backups",
        abstract: "List the embedded database's backups (size, time) and the time range a restore can reach.")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let logger = try options.makeLogger()
        let backRest = try BackupSetup.require(options, logger: logger)
        try backRest.prepare()
        let info = try backRest.info()
        guard !info.backups.isEmpty else {
            print("no backups yet in \(backRest.settings.repositoryDescription)")
            return
        }
        print(
            "LABEL".padding(34), "TYPE".padding(5), "STARTED (UTC)".padding(25), "SECONDS".padding(8),
            "DATABASE".padding(11), "REPOSITORY")
        for record in info.backups {
            print(
                record.label.padding(34), record.type.rawValue.padding(5), BackupTime.text(record.started).padding(25),
                String(Int(record.stopped.timeIntervalSince(record.started).rounded())).padding(8),
                BackupProgress.size(record.databaseBytes).padding(11), BackupProgress.size(record.repositoryBytes))
        }
        if let range = try backRest.restorableRange(info) {
            print("restorable: \(range) (restore --to TIME), or everything archived (restore --latest)")
        } else {
            print("restorable: everything archived (restore --latest); no commit archived after the oldest backup yet")
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
