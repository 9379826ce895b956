import EmbeddedPostgres
import Foundation
import Logging
import PGClient
import QuoteAPI

/// The embedded server's own backups: every half minute, takes the backup the schedule says is due and refreshes
/// what /metrics reports (last backup, oldest restorable time, WAL archive failures).
struct BackupScheduler {
    let schedule: BackupSchedule?
    let database: Database
    let dataDirectory: URL
    let status: BackupStatus
    let pool: PGPool
    let logger: Logger

    /// Runs until the task is cancelled. Cancelled at shutdown, it may see a backup under way fail as the database
    /// stops: that is the shutdown's doing, not a failure to report (pgBackRest resumes or discards the partial one).
    func run() async {
        guard let backRest = database.backups else { return }
        var retryAfter = Date.distantPast
        while !Task.isCancelled {
            do {
                let info = try backRest.info()
                publish(info.backups)
                if let schedule, Date() >= retryAfter, let type = schedule.due(at: Date(), backups: info.backups) {
                    do {
                        let record = try await TakeBackup.run(
                            type, database, dataDirectory: dataDirectory,
                            reason: "schedule", logger: logger)
                        publish(info.backups + [record])
                        publish(try backRest.info().backups)  // retention may have expired old ones
                    } catch {
                        if Task.isCancelled {
                            logger.info("scheduled backup cut short by the shutdown")
                            return
                        }
                        // Another backup may be running (a command): try again later, not at once.
                        retryAfter = Date().addingTimeInterval(300)
                        logger.error("scheduled backup failed", metadata: ["error": "\(error)"])
                    }
                }
                let failures = try await pool.withConnection { connection in
                    let rows = try connection.query("SELECT failed_count FROM pg_stat_archiver")
                    return try rows[rows.startIndex].decode("failed_count", as: Int.self)
                }
                status.update { $0.archiveFailures = failures }
            } catch {
                if Task.isCancelled { return }
                logger.warning("cannot read the backup repository", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(30))
        }
    }

    private func publish(_ backups: [BackupRecord]) {
        status.update { snapshot in
            snapshot.oldestRestorable = backups.first?.restorableFrom
            if let last = backups.last {
                snapshot.lastSuccess = last.stopped
                snapshot.lastDatabaseBytes = last.databaseBytes
                snapshot.lastRepositoryBytes = last.repositoryBytes
            }
        }
    }
}
