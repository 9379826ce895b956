import ArgumentParser
import EmbeddedPostgres
import Foundation
import Logging
import PGClient
import QuoteVault

/// The database a command works on: the configured one, or an embedded cluster under QUOTEVAULT_DATA.
struct Database {
    let url: String
    /// The embedded cluster when this command started it (and stops it); nil when it was already running.
    let embedded: EmbeddedPostgres?
    /// Embedded mode keeps a generated JWT secret beside the cluster; configured mode requires JWT_SECRET.
    let isEmbedded: Bool
    /// The embedded cluster, whoever started it.
    var cluster: EmbeddedPostgres? = nil
    /// WAL archiving and backups of the embedded cluster, when on.
    var backups: BackRest? = nil

    static func open(_ options: ServerOptions, logger: Logger) throws -> Database {
        if let url = options.value(options.databaseURL, "DATABASE_URL") {
            return Database(url: url, embedded: nil, isEmbedded: false)
        }
        let directory = options.resolvedDataDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let backups = try BackupSetup.make(options, logger: logger)
        try backups?.prepare(creatingRepository: true)
        let embedded = EmbeddedPostgres(
            dataDirectory: BackupSetup.clusterDirectory(options),
            settings: try backups?.archiveSettings ?? [:], logger: logger)
        // A cluster another process runs (e.g. `seed` while `serve` is up) is used, and left running.
        let alreadyRunning = embedded.isRunning
        let url = try embedded.start()
        logger.info("embedded PostgreSQL ready", metadata: ["data": .string(directory.path)])
        return Database(
            url: url, embedded: alreadyRunning ? nil : embedded, isEmbedded: true, cluster: embedded,
            backups: backups)
    }

    /// Runs `body` on the database, migrated, through a pool of `poolSize` (given the migrations applied now),
    /// then closes both: the database work of the one-off commands.
    static func withMigrated<T>(
        _ options: ServerOptions, logger: Logger, poolSize: Int = 1, _ body: (PGPool, [String]) async throws -> T
    ) async throws -> T {
        let database = try open(options, logger: logger)
        defer { database.close(logger: logger) }
        let pool = PGPool(connectionString: database.url, size: poolSize, logger: logger)
        defer { pool.shutdown() }
        let directory = try Migration.locateDirectory(explicit: options.value(options.migrationsDir, "MIGRATIONS_DIR"))
        let migrator = try Migrator(migrationsDirectory: directory, logger: logger)
        return try await body(pool, try await migrator.migrate(using: pool))
    }

    func close(logger: Logger) {
        guard let embedded else { return }
        if backups != nil {
            // The segment being written is archived only when full: close it now, so the archive holds every
            // commit made before this stop (pg_ctl stop waits for the archiver).
            do { _ = try PGConnection(connectionString: url).query("SELECT pg_switch_wal()") } catch {
                logger.warning("could not switch WAL before stopping", metadata: ["error": "\(error)"])
            }
        }
        do { try embedded.stop() } catch {
            logger.error("could not stop embedded PostgreSQL", metadata: ["error": "\(error)"])
        }
    }

    /// Why `secret` may not sign tokens, or nil: at least 32 characters, at least 10 of them distinct. Anyone who
    /// guesses the key can sign a token for any user (or the service role), so a short or repetitive one is refused.
    static func refusal(ofSecret secret: String) -> String? {
        let problem: String
        if secret.count < 32 {
            problem = "is \(secret.count) characters long; it must be at least 32"
        } else if Set(secret).count < 10 {
            problem = "uses \(Set(secret).count) distinct characters; it must use at least 10"
        } else {
            return nil
        }
        return "JWT_SECRET \(problem): whoever guesses it can sign tokens for any user. "
            + "Generate one with `openssl rand -hex 32`"
    }

    /// JWT_SECRET (see `refusal(ofSecret:)`), or in embedded mode a random one generated once and kept (0600).
    func jwtSecret(_ options: ServerOptions) throws -> [UInt8] {
        if let secret = options.value(options.jwtSecret, "JWT_SECRET") {
            if let refusal = Self.refusal(ofSecret: secret) { throw ValidationError(refusal) }
            return Array(secret.utf8)
        }
        guard isEmbedded else { throw ValidationError("JWT_SECRET is required when DATABASE_URL is set") }
        let file = options.resolvedDataDirectory.appendingPathComponent("jwt-secret")
        if let stored = try? String(contentsOf: file, encoding: .utf8) {
            let existing = stored.trimmingCharacters(in: .whitespacesAndNewlines)
            if existing.utf8.count >= 32 { return Array(existing.utf8) }
        }
        var generator = SystemRandomNumberGenerator()  // getrandom(2) on Linux: cryptographically secure
        let secret = (0..<48).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        _ = FileManager.default.createFile(
            atPath: file.path, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600])
        return Array(secret.utf8)
    }
}
