import Foundation

/// One minute of the server's traffic, as the overview charts it.
public struct TrafficMinute: Sendable, Equatable {
    public let start: Date
    public let requests: Int
    /// Answers with a 5xx status.
    public let errors: Int
    /// Latency percentiles in milliseconds (the upper bound of a histogram bucket); nil without requests.
    public let p50Milliseconds: Double?
    public let p99Milliseconds: Double?

    public init(start: Date, requests: Int, errors: Int, p50Milliseconds: Double?, p99Milliseconds: Double?) {
        self.start = start
        self.requests = requests
        self.errors = errors
        self.p50Milliseconds = p50Milliseconds
        self.p99Milliseconds = p99Milliseconds
    }
}

/// The last successful backup of the embedded database.
public struct BackupSummary: Sendable, Equatable {
    public let endedAt: Date
    public let databaseBytes: Int64?

    public init(endedAt: Date, databaseBytes: Int64?) {
        self.endedAt = endedAt
        self.databaseBytes = databaseBytes
    }
}

/// What the overview reads from the running server (not the database): kept in the server's metrics, handed to
/// the console as closures so the console does not depend on the server's assembly.
public struct ConsoleServerStatus: Sendable {
    /// The last hour, oldest minute first, ending with the current minute.
    public var traffic: @Sendable () -> [TrafficMinute]
    /// Nil while backups are off or none succeeded yet.
    public var lastBackup: @Sendable () -> BackupSummary?

    public init(
        traffic: @escaping @Sendable () -> [TrafficMinute],
        lastBackup: @escaping @Sendable () -> BackupSummary?
    ) {
        self.traffic = traffic
        self.lastBackup = lastBackup
    }

    /// A console without a server around it (nothing measured).
    public static let none = ConsoleServerStatus(traffic: { [] }, lastBackup: { nil })
}
