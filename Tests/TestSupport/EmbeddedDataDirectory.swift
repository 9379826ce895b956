import EmbeddedPostgres
import Foundation
import Logging

/// A QUOTEVAULT_DATA directory and a backup repository beside it, for tests that run `quote-server` in embedded
/// mode; `cleanUp()` stops a cluster left running there and deletes both.
public final class EmbeddedDataDirectory: @unchecked Sendable {
    // @unchecked: used from one test at a time.
    public let root: URL
    public var data: URL { root.appendingPathComponent("data") }
    public var repository: URL { root.appendingPathComponent("backups") }
    public var cluster: URL { data.appendingPathComponent("postgres") }

    public init() throws {
        // World-traversable: when tests run as root, PostgreSQL and pgBackRest run as the postgres user.
        root = URL(fileURLWithPath: "/tmp/quotevault-backup-test-\(UUID().uuidString.prefix(8))")
        for directory in [root, data] {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o755])
        }
    }

    /// The environment for `quote-server` on this data.
    public func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["QUOTEVAULT_DATA": data.path, "BACKUP_REPO": repository.path, "PORT": "0"].merging(extra) { $1 }
    }

    /// The URI of the embedded cluster while it runs (its port and password are kept in its directory).
    public func databaseURL() throws -> String {
        let port = try String(contentsOf: cluster.appendingPathComponent("embedded.port"), encoding: .utf8)
        let password = try String(contentsOf: cluster.appendingPathComponent("embedded.secret"), encoding: .utf8)
        guard let number = Int(port.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw EmbeddedPostgresError("no port in \(cluster.path)")
        }
        return EmbeddedPostgres.url(port: number, password: password.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    public func cleanUp() {
        try? EmbeddedPostgres(dataDirectory: cluster, logger: Logger(label: "EmbeddedDataDirectory")).stop()
        try? FileManager.default.removeItem(at: root)
    }
}
