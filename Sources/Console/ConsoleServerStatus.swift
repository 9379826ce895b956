import Foundation
import HTTPServer

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
    public var traffic: @Sendable () -> [TrafficHistory.Minute]
    /// Nil while backups are off or none succeeded yet.
    public var lastBackup: @Sendable () -> BackupSummary?

    public init(
        traffic: @escaping @Sendable () -> [TrafficHistory.Minute],
        lastBackup: @escaping @Sendable () -> BackupSummary?
    ) {
        self.traffic = traffic
        self.lastBackup = lastBackup
    }

    /// A console without a server around it (nothing measured).
    public static let none = ConsoleServerStatus(traffic: { [] }, lastBackup: { nil })
}
