import Foundation
import Logging
import PGClient

/// Closes the WAL segment being written whenever a transaction started or ended since the last close, every
/// `interval`: the archive then holds every commit within twice that (BACKUP's recovery point, 60 s) from the
/// first minute after a start. PostgreSQL's archive_timeout alone misses the first minutes after each start: its
/// checkpointer computes its first sleep while startup is still under way, when archive_timeout does not apply, and
/// sleeps the whole checkpoint_timeout (300 s) before it looks again.
struct WALSwitcher {
    let pool: PGPool
    let interval: Duration
    let logger: Logger

    /// Runs until the task is cancelled. The first pass closes the segment at once: it may hold commits made
    /// before a crash that no clean stop archived.
    func run() async {
        var snapshotAtLastSwitch: String?
        while !Task.isCancelled {
            do {
                let previous = snapshotAtLastSwitch
                snapshotAtLastSwitch = try await pool.withConnection { connection in
                    // xmin:xmax:running transactions; it changes when a transaction id is assigned or one ends.
                    let rows = try connection.query("SELECT pg_current_snapshot()::text AS snapshot")
                    let snapshot = try rows[rows.startIndex].decode("snapshot", as: String.self)
                    guard snapshot != previous else { return snapshot }
                    _ = try connection.query("SELECT pg_switch_wal()")
                    return snapshot
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("could not close the WAL segment for archiving", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
