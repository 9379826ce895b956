import Foundation

/// What `/metrics` reports about backups of the embedded database, kept up to date by the server's backup
/// schedule (the scrape reads memory only). Nil fields are not reported; nothing is reported while backups are off.
public final class BackupStatus: @unchecked Sendable {
    // @unchecked: `current` is guarded by `lock`.
    public struct Snapshot: Sendable {
        /// When the last successful backup ended, and its size: the database it restores, and what it added to the
        /// repository.
        public var lastSuccess: Date?
        public var lastDatabaseBytes: Int64?
        public var lastRepositoryBytes: Int64?
        /// WAL segments PostgreSQL failed to archive (pg_stat_archiver.failed_count, since the server started).
        public var archiveFailures: Int?
        /// The oldest time a restore can reach (the end of the oldest backup kept).
        public var oldestRestorable: Date?

        public init() {}
    }

    private let lock = NSLock()
    private var current: Snapshot?

    public init() {}

    public var snapshot: Snapshot? { lock.withLock { current } }

    public func update(_ change: (inout Snapshot) -> Void) {
        lock.withLock {
            var snapshot = current ?? Snapshot()
            change(&snapshot)
            current = snapshot
        }
    }
}
