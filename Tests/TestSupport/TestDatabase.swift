import AuthJWT
import EmbeddedPostgres
import Foundation
import Logging
import PGClient

/// PostgreSQL for tests: a real server, and a fresh database per test.
///
/// Set `TEST_DATABASE_URL` to a URI of a server where the user may CREATE DATABASE;
/// otherwise one embedded cluster is started per test process in /tmp and stopped when
/// the process exits.
public enum TestDatabase {
    /// Clusters and databases to clean up at exit, guarded by `lock`.
    private nonisolated(unsafe) static var sharedURL: String?
    private nonisolated(unsafe) static var clusters: [(cluster: EmbeddedPostgres, directory: URL)] = []
    private nonisolated(unsafe) static var externalDatabases: [String] = []
    private nonisolated(unsafe) static var exitHandlerInstalled = false
    private static let lock = NSRecursiveLock()

    /// Settings that make a throwaway cluster fast; durability does not matter for it.
    public static let fastSettings = ["fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"]

    /// The server for this test process: `TEST_DATABASE_URL` if set, else the shared
    /// embedded cluster (started on first use).
    public static func serverURL() throws -> String {
        if let url = ProcessInfo.processInfo.environment["TEST_DATABASE_URL"], !url.isEmpty { return url }
        lock.lock()
        defer { lock.unlock() }
        if let sharedURL { return sharedURL }
        removeAbandonedClusters()
        let cluster = try makeDedicatedCluster(label: "shared")
        let url = try cluster.start()
        sharedURL = url
        return url
    }

    /// Creates an empty database `test_<random>` on the test server and returns its URI.
    /// `setup` (e.g. migrations) runs on a connection to it before it is returned.
    public static func makeDatabase(setup: ((PGConnection) throws -> Void)? = nil) throws -> String {
        let server = try serverURL()
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        do {
            let admin = try PGConnection(connectionString: server)
            // `name` is generated above from hex digits only, so it is safe as SQL text.
            try admin.execute(unsafeSQL: "CREATE DATABASE \(name)")
        }
        let url = try databaseURL(server: server, database: name)
        if ProcessInfo.processInfo.environment["TEST_DATABASE_URL"] != nil {
            lock.lock()
            externalDatabases.append(name)
            installExitHandler()
            lock.unlock()
        }
        if let setup {
            let connection = try PGConnection(connectionString: url)
            try setup(connection)
        }
        return url
    }

    /// A new, not yet started cluster in its own temporary directory, for tests that stop
    /// and restart the server. It is stopped and deleted when the process exits.
    public static func makeDedicatedCluster(label: String = "dedicated") throws -> EmbeddedPostgres {
        // /tmp and the directory are world-traversable: when tests run as root, PostgreSQL
        // runs as the postgres user and must reach the data directory.
        let directory = URL(fileURLWithPath: "/tmp")
            .appendingPathComponent("quotevault-test-\(getpid())-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        var logger = Logger(label: "TestDatabase")
        logger.logLevel =
            ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) }
            ?? .warning
        let cluster = EmbeddedPostgres(
            dataDirectory: directory.appendingPathComponent("data"),
            settings: fastSettings, logger: logger)
        lock.lock()
        clusters.append((cluster, directory))
        installExitHandler()
        lock.unlock()
        return cluster
    }

    /// `server` with its database replaced by `database`. Needs a URI (postgresql://...).
    public static func databaseURL(server: String, database: String) throws -> String {
        guard var components = URLComponents(string: server),
            components.scheme == "postgresql" || components.scheme == "postgres"
        else {
            throw EmbeddedPostgresError("TEST_DATABASE_URL must be a postgresql:// URI")
        }
        components.path = "/" + database
        guard let url = components.string else { throw EmbeddedPostgresError("cannot build a URI for \(database)") }
        return url
    }

    private static func installExitHandler() {
        guard !exitHandlerInstalled else { return }
        exitHandlerInstalled = true
        // OpenSSL registers its own clean-up at exit when first used, and exit runs handlers last-in first-out:
        // used first, it is torn down after the clusters stop, so a pool thread reconnecting meanwhile (libpq's
        // SCRAM runs on OpenSSL) still finds it whole.
        _ = try? SecureRandom.bytes(count: 1)
        atexit { TestDatabase.cleanUpAtExit() }
    }

    private static func cleanUpAtExit() {
        lock.lock()
        defer { lock.unlock() }
        if let server = ProcessInfo.processInfo.environment["TEST_DATABASE_URL"], !externalDatabases.isEmpty,
            let admin = try? PGConnection(connectionString: server)
        {
            for name in externalDatabases {
                try? admin.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        }
        for (cluster, directory) in clusters {
            try? cluster.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        clusters.removeAll()
    }

    /// Stops and deletes clusters left by test processes that crashed before their exit
    /// handler ran (their directory names carry the dead process's PID).
    private static func removeAbandonedClusters() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for name in names where name.hasPrefix("quotevault-test-") {
            let parts = name.split(separator: "-")
            guard parts.count > 2, let pid = Int32(parts[2]), pid != getpid(),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent(name)
            let cluster = EmbeddedPostgres(
                dataDirectory: directory.appendingPathComponent("data"),
                logger: Logger(label: "TestDatabase"))
            try? cluster.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
