import Foundation

/// Where an embedded cluster's WAL and backups go, and how many full backups are kept.
public struct BackupSettings: Sendable {
    /// A directory used as pgBackRest's repository (`repo1-path`); ignored when `configFile` is set.
    public var repository: URL
    /// An operator's pgBackRest configuration file holding the repository options (`[global]` section: S3,
    /// Azure, GCS, SFTP...). When set, `repository` is not used.
    public var configFile: URL?
    /// Full backups kept (older ones, and the WAL only they need, are expired after each backup).
    public var retainedFullBackups: Int
    /// pgBackRest's generated configuration, logs, locks and spool (beside the data, not in the repository).
    public var workDirectory: URL
    /// Seconds after which a partly filled WAL segment is archived anyway: the recovery point objective.
    public var archiveTimeout: Int

    public init(
        repository: URL, configFile: URL?, retainedFullBackups: Int, workDirectory: URL, archiveTimeout: Int = 60
    ) {
        self.repository = repository.standardizedFileURL
        self.configFile = configFile
        self.retainedFullBackups = retainedFullBackups
        self.workDirectory = workDirectory.standardizedFileURL
        self.archiveTimeout = archiveTimeout
    }

    /// Where the repository is, in words, for messages.
    public var repositoryDescription: String {
        configFile.map { "the repository configured in \($0.path)" } ?? repository.path
    }
}
