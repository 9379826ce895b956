import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging
import PGClient

/// `quote-server restore --to TIME | --latest [--target DIR]`: the embedded database as it was at TIME, or with
/// everything archived. Without --target the restore is made and recovered beside the current data directory,
/// which is then moved aside (never deleted) for the restored one; the server must be stopped.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore the embedded database from BACKUP_REPO to a point in time or to the latest archived state.",
        discussion: """
            TIME is ISO 8601, e.g. 2026-11-25T14:42:24Z (`quote-server backups` shows the range). Without --target \
            the server must be stopped; the current data directory is renamed postgres.before-restore-STAMP.
            """)

    @OptionGroup var options: ServerOptions
    @Option(help: "The time to restore to (ISO 8601, UTC or with an offset).") var to: String?
    @Flag(help: "Restore everything archived.") var latest = false
    @Option(help: "Restore into this new or empty directory instead, leaving the data as it is.") var target: String?

    func validate() throws {
        guard (to != nil) != latest else { throw ValidationError("give either --to TIME or --latest") }
        if let to, BackupTime.parse(to) == nil {
            throw ValidationError("--to must be an ISO 8601 time such as 2026-11-25T14:42:24Z, got \(to)")
        }
    }

    func run() async throws {
        let logger = try options.makeLogger()
        let backRest = try BackupSetup.require(options, logger: logger)
        let data = BackupSetup.clusterDirectory(options)
        let cluster = EmbeddedPostgres(dataDirectory: data, settings: try backRest.archiveSettings, logger: logger)
        if target == nil, cluster.isRunning {
            throw BackupCommandError(
                "a server is running on \(data.path); stop it (quote-server serve) before restoring, "
                    + "or restore elsewhere with --target DIR")
        }
        // After a lost disk QUOTEVAULT_DATA may be gone entirely: the restore makes it again.
        try FileManager.default.createDirectory(
            at: options.resolvedDataDirectory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        let lock = try BackupLock(options.resolvedDataDirectory)
        defer { withExtendedLifetime(lock) {} }
        try backRest.prepare()
        let info = try backRest.info()
        guard !info.backups.isEmpty else {
            throw BackupCommandError(
                "the backup repository at \(backRest.settings.repositoryDescription) holds no backup")
        }
        let point: BackRest.Target
        if let to, let time = BackupTime.parse(to) {
            guard let range = try backRest.restorableRange(info) else {
                throw BackupCommandError(
                    "no point in time can be restored yet (no commit archived after the oldest "
                        + "backup); use --latest")
            }
            guard range.contains(time) else {
                throw BackupCommandError("\(BackupTime.text(time)) is outside the restorable range, \(range)")
            }
            point = .time(time)
        } else {
            point = .latest
        }
        let progress = BackupProgress("restore", logger: logger)
        let report: @Sendable (Double, Int64) -> Void = { progress.report(share: $0, total: $1) }
        if let target {
            let directory = URL(fileURLWithPath: target).standardizedFileURL
            let existing = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            guard existing.isEmpty else { throw BackupCommandError("--target \(directory.path) is not empty") }
            try await backRest.restore(to: point, into: directory, progress: report)
            progress.finish()
            print("restored into \(directory.path); PostgreSQL recovers \(describe(point)) when started on it")
            return
        }
        // Restored and recovered beside the current data, which is moved aside only once the restored database
        // has come up, replayed to its target and answered; until then a failure leaves the data as it was.
        let stamp = Self.stamp()
        let parent = data.deletingLastPathComponent()
        let side = parent.appendingPathComponent("postgres.restoring-\(stamp)")
        let restored = EmbeddedPostgres(
            dataDirectory: side, settings: try backRest.archiveSettings(for: side), logger: logger)
        do {
            try await backRest.restore(to: point, into: side, progress: report)
            progress.finish()
            try await recover(restored, logger: logger)
        } catch {
            progress.finish()
            try? restored.stop()
            let failed = parent.appendingPathComponent("postgres.failed-restore-\(stamp)")
            if (try? FileManager.default.moveItem(at: side, to: failed)) != nil {
                logger.notice(
                    "the failed restore is kept for inspection", metadata: ["directory": .string(failed.path)])
            }
            throw BackupCommandError("restore failed; \(data.path) is unchanged: \(error)")
        }
        let aside = parent.appendingPathComponent("postgres.before-restore-\(stamp)")
        let hadData = FileManager.default.fileExists(atPath: data.path)
        if hadData { try FileManager.default.moveItem(at: data, to: aside) }
        try FileManager.default.moveItem(at: side, to: data)
        print(
            "restored \(data.path) \(describe(point))"
                + (hadData ? "; the previous data directory is \(aside.path)" : ""))
    }

    private func describe(_ point: BackRest.Target) -> String {
        switch point {
        case .latest: "to the latest archived state"
        case .time(let time): "to \(BackupTime.text(time))"
        }
    }

    /// Starts the restored cluster, waits until it has replayed the WAL and left recovery, then stops it.
    private func recover(_ cluster: EmbeddedPostgres, logger: Logger) async throws {
        let url = try cluster.start()
        defer { try? cluster.stop() }
        let connection = try PGConnection(connectionString: url)
        let deadline = ContinuousClock.now + .seconds(6 * 3600)
        while ContinuousClock.now < deadline {
            let rows = try connection.query("SELECT pg_is_in_recovery() AS recovering")
            if try rows[rows.startIndex].decode("recovering", as: Bool.self) == false {
                _ = try connection.query("SELECT pg_switch_wal()")
                logger.info("restored database recovered and promoted")
                return
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw BackupCommandError(
            "the restored database was still recovering after 6 hours; see \(cluster.logFile.path)")
    }

    private static func stamp() -> String {
        BackupTime.text(Date()).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: ".", with: "-")
    }
}
