import Console
import QuoteAPI

/// The server's measurements the console's overview shows, read from memory when the page is drawn.
enum ConsoleStatusSource {
    static func status(of metrics: ServerMetrics) -> ConsoleServerStatus {
        ConsoleServerStatus(
            traffic: {
                metrics.traffic.recent().map {
                    TrafficMinute(
                        start: $0.start, requests: $0.requests, errors: $0.errors,
                        p50Milliseconds: $0.p50Milliseconds, p99Milliseconds: $0.p99Milliseconds)
                }
            },
            lastBackup: {
                guard let snapshot = metrics.backups.snapshot, let ended = snapshot.lastSuccess else { return nil }
                return BackupSummary(endedAt: ended, databaseBytes: snapshot.lastDatabaseBytes)
            })
    }
}
