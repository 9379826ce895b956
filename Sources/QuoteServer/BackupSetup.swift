import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging

/// Backups of the embedded database: pgBackRest settings from BACKUP_REPO, BACKUP_CONFIG and BACKUP_RETENTION.
enum BackupSetup {
    /// pgBackRest for the embedded cluster, or nil when backups are off: BACKUP_REPO=off, DATABASE_URL set (the
    /// operator's database is backed up by its own operator), or pgbackrest missing while nothing asked for it.
    static func make(_ options: ServerOptions, logger: Logger) throws -> BackRest? {
        guard options.value(options.databaseURL, "DATABASE_URL") == nil else { return nil }
        let repository = options.value(options.backupRepo, "BACKUP_REPO")
        let configFile = options.value(options.backupConfig, "BACKUP_CONFIG")
        if repository?.lowercased() == "off" { return nil }
        guard BackRest.isInstalled else {
            if repository != nil || configFile != nil {
                throw ValidationError(
                    "BACKUP_REPO/BACKUP_CONFIG is set but pgbackrest is not installed (scripts/install-deps)")
            }
            logger.warning(
                "pgbackrest is not installed: no WAL archiving and no backups (set BACKUP_REPO=off to silence)")
            return nil
        }
        let retention = try options.intValue(options.backupRetention, "BACKUP_RETENTION", default: 7)
        guard (1...9_999_999).contains(retention) else { throw ValidationError("BACKUP_RETENTION must be 1...9999999") }
        let data = options.resolvedDataDirectory
        let settings = BackupSettings(
            repository: repository.map { URL(fileURLWithPath: $0) } ?? defaultRepository(data),
            configFile: configFile.map { URL(fileURLWithPath: $0).standardizedFileURL },
            retainedFullBackups: retention, workDirectory: data.appendingPathComponent("pgbackrest"))
        return BackRest(settings: settings, dataDirectory: clusterDirectory(options), logger: logger)
    }

    /// The same, for the backup commands: an error rather than nil when backups are off.
    static func require(_ options: ServerOptions, logger: Logger) throws -> BackRest {
        guard options.value(options.databaseURL, "DATABASE_URL") == nil else {
            throw ValidationError(
                "backup, backups and restore work on the embedded database (no DATABASE_URL); "
                    + "a configured database is backed up where it runs")
        }
        guard let backRest = try make(options, logger: logger) else {
            throw ValidationError("backups are off (BACKUP_REPO=off or pgbackrest not installed)")
        }
        return backRest
    }

    /// The embedded cluster's data directory.
    static func clusterDirectory(_ options: ServerOptions) -> URL {
        options.resolvedDataDirectory.appendingPathComponent("postgres")
    }

    /// A sibling of QUOTEVAULT_DATA (`.quotevault` -> `.quotevault-backups`): outside the data, so deleting or
    /// replacing the data directory leaves the backups.
    static func defaultRepository(_ data: URL) -> URL {
        data.deletingLastPathComponent().appendingPathComponent(data.lastPathComponent + "-backups")
    }

    /// Warns when the repository directory shares a file system with the database: one disk failure takes both.
    static func warnIfSameFileSystem(_ backRest: BackRest, logger: Logger) {
        guard backRest.settings.configFile == nil else { return }
        var repository = stat()
        var data = stat()
        guard stat(backRest.settings.repository.path, &repository) == 0, stat(backRest.dataDirectory.path, &data) == 0,
            repository.st_dev == data.st_dev
        else { return }
        logger.warning(
            """
            the backup repository is on the same file system as the database: one disk failure loses both; \
            set BACKUP_REPO to another disk or BACKUP_CONFIG to a remote repository
            """,
            metadata: ["repository": .string(backRest.settings.repository.path)])
    }
}
