import Console
import QuoteAPI

/// The server's measurements the console's overview shows, read from memory when the page is drawn.
enum ConsoleStatusSource {
    static func status(of metrics: ServerMetrics) -> ConsoleServerStatus {
        ConsoleServerStatus(
            traffic: { metrics.traffic.recent() },
            lastBackup: {
                guard let snapshot = metrics.backups.snapshot, let ended = snapshot.lastSuccess else { return nil }
                return BackupSummary(endedAt: ended, databaseBytes: snapshot.lastDatabaseBytes)
            })
    }
}
