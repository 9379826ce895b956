import Foundation
import Logging

/// pgBackRest for an embedded cluster: WAL archiving, backups, the repository's contents and restores.
///
/// Every invocation reads a generated configuration (`[quotevault]` stanza: the data directory and the user) from
/// `workDirectory/conf.d`, and the repository options from either a generated `[global]` file (`repo1-path` =
/// the repository directory) or the operator's own pgBackRest configuration file. pgBackRest runs as the user
/// that runs PostgreSQL, and reaches the server over TCP on 127.0.0.1 (the embedded server opens no socket).
public final class BackRest: Sendable {
    public static let stanza = "quotevault"
    public let settings: BackupSettings
    /// The cluster's data directory (`pg1-path`).
    public let dataDirectory: URL
    private let logger: Logger

    public init(settings: BackupSettings, dataDirectory: URL, logger: Logger) {
        self.settings = settings
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.logger = logger
    }

    public static var isInstalled: Bool { findExecutable("pgbackrest") != nil }

    private var confDirectory: URL { settings.workDirectory.appendingPathComponent("conf.d") }
    private var mainConfig: URL {
        settings.configFile ?? settings.workDirectory.appendingPathComponent("pgbackrest.conf")
    }
    private var scratchDirectory: URL { settings.workDirectory.appendingPathComponent("tmp") }

    /// The options every pgBackRest command gets.
    private var baseArguments: [String] {
        ["--config=\(mainConfig.path)", "--config-include-path=\(confDirectory.path)", "--stanza=\(Self.stanza)"]
    }

    /// Settings for the embedded server: archive each WAL segment into the repository, at least every
    /// `archiveTimeout` seconds.
    public var archiveSettings: [String: String] {
        get throws { try archiveSettings(for: dataDirectory) }
    }

    /// The same for a cluster in `directory` (a restore made beside the data): pgBackRest reads the cluster's
    /// pg_control from `pg1-path` when it archives.
    public func archiveSettings(for directory: URL) throws -> [String: String] {
        let path = directory.standardizedFileURL == dataDirectory ? [] : ["--pg1-path=\(directory.path)"]
        let command = ([try Self.executable()] + baseArguments + path + ["archive-push", "%p"]).map(Self.shellQuoted)
        return [
            "archive_mode": "on",
            "archive_command": command.joined(separator: " "),
            "archive_timeout": String(settings.archiveTimeout),
            "wal_level": "replica",
        ]
    }

    /// Creates the work directories (and, when asked, the repository directory) owned by PostgreSQL's user, and
    /// writes the generated configuration.
    public func prepare(creatingRepository: Bool = false) throws {
        let tools = try Tools.prepare()
        var directories = [
            settings.workDirectory, confDirectory, scratchDirectory,
            settings.workDirectory.appendingPathComponent("log"),
            settings.workDirectory.appendingPathComponent("lock"),
        ]
        if settings.configFile == nil, creatingRepository { directories.append(settings.repository) }
        for directory in directories { try tools.runner.createOwnedDirectory(directory, permissions: 0o750) }
        if let configFile = settings.configFile, !FileManager.default.isReadableFile(atPath: configFile.path) {
            throw EmbeddedPostgresError("BACKUP_CONFIG \(configFile.path) cannot be read")
        }
        let work = settings.workDirectory.path
        if settings.configFile == nil {
            try tools.runner.writeOwned(
                """
                # Written by quote-server at every start: the repository (BACKUP_REPO).
                [global]
                repo1-path=\(settings.repository.path)

                """, to: mainConfig, permissions: 0o640)
        }
        try tools.runner.writeOwned(
            """
            # Written by quote-server at every start: the embedded cluster and where pgBackRest keeps its own files.
            [global]
            log-path=\(work)/log
            lock-path=\(work)/lock
            spool-path=\(work)/tmp
            log-level-file=info
            log-level-console=warn
            log-level-stderr=off
            start-fast=y
            compress-type=lz4

            [\(Self.stanza)]
            pg1-path=\(dataDirectory.path)
            pg1-user=\(EmbeddedPostgres.user)
            pg1-database=postgres

            """, to: confDirectory.appendingPathComponent("quotevault.conf"), permissions: 0o640)
    }

    /// Throws, naming the cause, when the repository directory exists but pgBackRest's user cannot write to it:
    /// WAL archiving and backups would fail there. A repository from BACKUP_CONFIG is pgBackRest's to check.
    public func requireWritableRepository() throws {
        let path = settings.repository.path
        guard settings.configFile == nil, FileManager.default.fileExists(atPath: path) else { return }
        let tools = try Tools.prepare()
        guard try !tools.runner.canWrite(settings.repository) else { return }
        let attributes = (try? FileManager.default.attributesOfItem(atPath: path)) ?? [:]
        let owner = attributes[.ownerAccountName] as? String ?? "?"
        let group = attributes[.groupOwnerAccountName] as? String ?? "?"
        let mode = (attributes[.posixPermissions] as? NSNumber).map { String($0.intValue, radix: 8) } ?? "?"
        throw EmbeddedPostgresError(
            """
            the backup repository \(path) is not writable by user '\(tools.runner.userName)', which runs pgBackRest \
            (owner \(owner):\(group), mode \(mode)); give it to that user (chown -R) or set BACKUP_REPO to a \
            writable directory
            """)
    }

    /// Creates the stanza (or checks that the repository's matches this cluster). Needs the server running.
    public func createStanza(port: Int, password: String) throws {
        _ = try run(["stanza-create", "--pg1-port=\(port)"], password: password, what: "creating the backup stanza")
    }

    /// What the repository holds. Throws when it is missing or unreadable.
    public func info() throws -> RepositoryInfo {
        let output = try run(["info", "--output=json"], password: nil, what: "reading the backup repository")
        return try RepositoryInfo.parse(output, repository: settings.repositoryDescription)
    }

    /// Takes a backup of the running server (full when the repository has none yet) and returns it.
    /// `progress` is called every few seconds with the share done (0...1) and the database's size.
    public func backup(
        _ type: BackupType, port: Int, password: String,
        progress: @escaping @Sendable (Double, Int64) -> Void
    ) async throws -> BackupRecord {
        let before = try info().backups.map(\.label)
        let arguments = [
            "backup", "--type=\(type.rawValue)", "--pg1-port=\(port)",
            "--repo1-retention-full=\(settings.retainedFullBackups)",
        ]
        let total = Self.bytes(under: dataDirectory)
        try await runObserved(arguments, password: password, what: "backup") { share in progress(share, total) }
        guard let made = try info().backups.last(where: { !before.contains($0.label) }) else {
            throw EmbeddedPostgresError("pgBackRest reported success but the repository shows no new backup")
        }
        return made
    }

    /// From the end of the oldest backup to the last commit archived; nil when no time can be reached yet.
    /// Without a data directory (a lost disk) the last commit cannot be read: pgBackRest's archive-get reads the
    /// cluster's pg_control. The range then runs to now, and a time past the last commit fails in recovery.
    public func restorableRange(_ info: RepositoryInfo) throws -> RestorableRange? {
        guard let oldest = info.backups.first?.restorableFrom else { return nil }
        let control = dataDirectory.appendingPathComponent("global/pg_control")
        guard FileManager.default.fileExists(atPath: control.path) else {
            return RestorableRange(oldest: oldest, newest: Date(), newestIsLastCommit: false)
        }
        guard let newest = try lastArchivedCommit(info), newest >= oldest else { return nil }
        return RestorableRange(oldest: oldest, newest: newest)
    }

    /// Where a restore stops replaying WAL.
    public enum Target: Sendable {
        case latest
        case time(Date)
    }

    /// Restores into `directory` (created, or empty) from the repository; the server recovers to `target` and
    /// promotes when next started. `progress` gets the share restored (0...1) and the backup's size.
    public func restore(
        to target: Target, into directory: URL,
        progress: @escaping @Sendable (Double, Int64) -> Void
    ) async throws {
        let tools = try Tools.prepare()
        let info = try info()
        guard let newest = info.backups.last else {
            throw EmbeddedPostgresError("the backup repository at \(settings.repositoryDescription) holds no backup")
        }
        try tools.runner.createOwnedDirectory(directory, permissions: 0o700)
        var arguments = ["restore", "--pg1-path=\(directory.path)", "--archive-mode=preserve"]
        switch target {
        case .latest:
            arguments.append("--type=default")
        case .time(let time):
            arguments += ["--type=time", "--target=\(BackupTime.postgres(time))", "--target-action=promote"]
        }
        let total = newest.databaseBytes
        try await runObserved(arguments, password: nil, what: "restore") { share in progress(share, total) }
    }

    // MARK: Running pgBackRest

    private static func executable() throws -> String {
        guard let path = findExecutable("pgbackrest") else {
            throw EmbeddedPostgresError("pgbackrest is not installed (Debian package pgbackrest; scripts/install-deps)")
        }
        return path
    }

    /// Runs pgBackRest as PostgreSQL's user; returns its output or throws with its error.
    @discardableResult
    private func run(_ arguments: [String], password: String?, what: String) throws -> String {
        let tools = try Tools.prepare()
        var environment = ["PGHOST=127.0.0.1", "TZ=UTC"]
        if let password { environment.append("PGPASSWORD=\(password)") }
        let result = try tools.runner.run(
            URL(fileURLWithPath: try Self.executable()), baseArguments + arguments,
            extraEnvironment: environment)
        guard result.status == 0 else { throw Self.failure(what, result, repository: settings.repositoryDescription) }
        return result.output
    }

    /// Runs a long command (backup, restore) on another thread, calling `observe` every two seconds with the
    /// share done, read from the percentages pgBackRest writes to its log for each file at level detail.
    private func runObserved(
        _ arguments: [String], password: String?, what: String,
        observe: @escaping @Sendable (Double) -> Void
    ) async throws {
        let log = settings.workDirectory.appendingPathComponent("log/\(Self.stanza)-\(arguments[0]).log")
        try? FileManager.default.removeItem(at: log)  // one run's lines at a time; ours log the outcome
        let outcome = Locked<Result<String, Error>?>(nil)
        let thread = Thread { [self] in
            let result = Result { try run(arguments + ["--log-level-file=detail"], password: password, what: what) }
            outcome.withLock { $0 = result }
        }
        thread.start()
        var waited = 0
        while true {
            if let result = outcome.withLock({ $0 }) {
                _ = try result.get()
                return
            }
            try? await Task.sleep(for: .milliseconds(200))
            waited += 1
            if waited % 10 == 0, let share = Self.lastPercentage(in: log) { observe(share / 100) }
        }
    }

    /// The last `(SIZE, NN.NN%)` in the tail of a pgBackRest log.
    static func lastPercentage(in log: URL) -> Double? {
        guard let handle = try? FileHandle(forReadingFrom: log) else { return nil }
        defer { try? handle.close() }
        let end = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: end > 8192 ? end - 8192 : 0)
        let tail = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard let range = tail.range(of: #", (\d+(\.\d+)?)%\)"#, options: [.regularExpression, .backwards]) else {
            return nil
        }
        return Double(tail[range].dropFirst(2).dropLast(2))
    }

    /// A clear error from pgBackRest's exit: its ERROR lines, and plain words for the common cases.
    private static func failure(_ what: String, _ result: CommandResult, repository: String) -> EmbeddedPostgresError {
        let lines = result.output.split(separator: "\n").map(String.init)
        let errors = lines.filter { $0.contains("ERROR:") || $0.contains("HINT:") }
        let detail = (errors.isEmpty ? Array(lines.suffix(5)) : errors).joined(separator: "\n")
        if detail.contains("[050]") || detail.contains("unable to acquire lock") {
            return EmbeddedPostgresError(
                "another backup or restore is running on this repository; try again when it ends")
        }
        if detail.contains("missing stanza path") || detail.contains("does not exist") && detail.contains("info") {
            return EmbeddedPostgresError(
                "no backup repository at \(repository) (\(what)); the server creates it at start",
                output: detail)
        }
        return EmbeddedPostgresError(
            "\(what) failed (pgbackrest exit status \(result.status)) for \(repository)",
            output: detail)
    }

    // MARK: The newest restorable time

    /// The time of the last commit in the WAL archive, read from its newest segments (at most eight back).
    private func lastArchivedCommit(_ info: RepositoryInfo) throws -> Date? {
        guard var segment = info.archiveMax, let oldest = info.archiveMin else { return nil }
        let tools = try Tools.prepare()
        let waldump = tools.runner.binDirectory.appendingPathComponent("pg_waldump")
        for _ in 0..<8 {
            let file = scratchDirectory.appendingPathComponent(segment)
            defer { try? FileManager.default.removeItem(at: file) }
            try run(["archive-get", segment, file.path], password: nil, what: "reading the WAL archive")
            let dump = try tools.runner.run(waldump, ["--rmgr=Transaction", file.path], extraEnvironment: ["TZ=UTC"])
            if let time = Self.lastCommit(in: dump.output) { return time }
            guard segment > oldest, let previous = Self.previous(segment) else { break }
            segment = previous
        }
        return nil
    }

    /// The last `COMMIT <time> UTC` in pg_waldump's output.
    static func lastCommit(in output: String) -> Date? {
        let pattern = #"COMMIT(?:_PREPARED)? (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) UTC"#
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return nil }
        let range = NSRange(output.startIndex..., in: output)
        guard let match = expression.matches(in: output, range: range).last,
            let captured = Range(match.range(at: 1), in: output)
        else { return nil }
        return BackupTime.parse(output[captured] + "Z")
    }

    /// The WAL segment before `name` (24 hex digits: timeline, log, segment of 16 MB).
    static func previous(_ name: String) -> String? {
        guard name.count == 24, let log = UInt32(name.dropFirst(8).prefix(8), radix: 16),
            let segment = UInt32(name.suffix(8), radix: 16), log > 0 || segment > 0
        else { return nil }
        let (newLog, newSegment) = segment > 0 ? (log, segment - 1) : (log - 1, UInt32(0xFF))
        return String(name.prefix(8)) + String(format: "%08X%08X", newLog, newSegment)
    }

    // MARK: Files

    private static func shellQuoted(_ word: String) -> String {
        guard word.contains(where: { !($0.isLetter || $0.isNumber || "-_./=%:".contains($0)) }) else { return word }
        return "'" + word.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Bytes of the regular files under `directory`.
    static func bytes(under directory: URL) -> Int64 {
        var total: Int64 = 0
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])
        while let file = enumerator?.nextObject() as? URL {
            total += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }
}
