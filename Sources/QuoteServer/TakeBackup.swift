import EmbeddedPostgres
import Foundation
import Logging

/// Takes one backup of the running embedded cluster, holding the data directory's backup lock, with progress.
/// Used by `backup`, the server's schedule and the backup before a migration.
enum TakeBackup {
    static func run(
        _ type: BackupType, _ database: Database, dataDirectory: URL, reason: String,
        logger: Logger
    ) async throws -> BackupRecord {
        guard let backRest = database.backups, let cluster = database.cluster,
            let port = cluster.port, let password = cluster.password
        else {
            throw BackupCommandError("backups are off, or the embedded database is not running")
        }
        let lock = try BackupLock(dataDirectory)
        defer { withExtendedLifetime(lock) {} }
        logger.info("backup started", metadata: ["type": .string(type.rawValue), "reason": .string(reason)])
        let progress = BackupProgress("\(type.rawValue) backup", logger: logger)
        defer { progress.finish() }
        let record = try await backRest.backup(type, port: port, password: password) { share, total in
            progress.report(share: share, total: total)
        }
        logger.info(
            "backup finished",
            metadata: [
                "label": .string(record.label), "type": .string(record.type.rawValue),
                "seconds": .stringConvertible(Int(record.stopped.timeIntervalSince(record.started))),
                "database_bytes": .stringConvertible(record.databaseBytes),
                "repository_bytes": .stringConvertible(record.repositoryBytes),
            ])
        return record
    }

    /// One line about a backup, as the commands print it.
    static func describe(_ record: BackupRecord) -> String {
        let seconds = Int(record.stopped.timeIntervalSince(record.started).rounded())
        return "\(record.type.rawValue) backup \(record.label): database \(BackupProgress.size(record.databaseBytes)), "
            + "\(BackupProgress.size(record.repositoryBytes)) added to the repository, "
            + "\(BackupTime.text(record.started)) to \(BackupTime.text(record.stopped)) (\(seconds) s)"
    }
}
