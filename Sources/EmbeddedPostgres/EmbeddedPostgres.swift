import Foundation
import Logging

/// A local PostgreSQL cluster in a directory of our own, driven by initdb and pg_ctl:
/// a persistent data store for a single-host deployment, or a throwaway one for tests.
///
/// The server listens on 127.0.0.1 only, with no Unix socket, and asks for a password (SCRAM-SHA-256): the
/// superuser `quotevault`'s is generated at initialisation and kept in the data directory (`embedded.secret`,
/// mode 0600), so another local user cannot connect. A cluster made by an earlier version, which trusted local
/// TCP connections, gets a password and loses `trust` at its next start. When the process runs as root, the PostgreSQL
/// tools run as the `postgres` user (they refuse to run as root) and the data directory
/// belongs to that user.
public final class EmbeddedPostgres: Sendable {
    /// The cluster's superuser and the database `start()` creates.
    public static let user = "quotevault"
    public static let database = "quotevault"

    public let dataDirectory: URL
    private let requestedPort: Int?
    private let settings: [String: String]
    private let logger: Logger
    /// Serialises start/stop; holds the port of the running server.
    private let state = Locked<Int?>(nil)

    /// - Parameters:
    ///   - dataDirectory: the cluster's directory; created and initialised on first start.
    ///   - port: the TCP port; nil picks a free one on first start and reuses it afterwards
    ///     (it is remembered in the data directory) unless it has been taken meanwhile.
    ///   - settings: extra server settings (postgresql.conf names and values) applied at every
    ///     start, e.g. `["fsync": "off"]` for a throwaway test cluster.
    public init(dataDirectory: URL, port: Int? = nil, settings: [String: String] = [:], logger: Logger) {
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.requestedPort = port
        self.settings = settings
        self.logger = logger
    }

    /// The server's log (written by pg_ctl).
    public var logFile: URL { dataDirectory.appendingPathComponent("server.log") }

    /// Creates the cluster if needed, starts the server (waiting until it accepts
    /// connections) and creates database `quotevault` if missing. Returns a libpq URI such
    /// as `postgresql://quotevault@127.0.0.1:5433/quotevault`. If the server is already
    /// running (e.g. left behind by an earlier process), it is reused.
    public func start() throws -> String {
        try state.withLock { port in
            let tools = try Tools.prepare()
            try prepareDataDirectory(tools)
            if !FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) {
                try initialise(tools)
            }
            let runningPort: Int
            if let adopted = try runningServerPort(tools) {
                logger.info("PostgreSQL is already running", metadata: ["port": "\(adopted)"])
                runningPort = adopted
            } else {
                runningPort = try startServer(tools)
            }
            let password = try ensurePassword(tools)
            try ensureDatabase(tools, port: runningPort, password: password)
            port = runningPort
            return Self.url(port: runningPort, password: password)
        }
    }

    /// Stops the server (`pg_ctl stop -m fast`: open sessions are disconnected). Does nothing
    /// if it is not running.
    public func stop() throws {
        try state.withLock { port in
            let tools = try Tools.prepare()
            guard try runningServerPort(tools) != nil else {
                port = nil
                return
            }
            try tools.runner.check(
                tools.pgCtl, ["stop", "-D", dataDirectory.path, "-m", "fast", "-w", "-t", "60", "-s"],
                failure: "pg_ctl stop failed for \(dataDirectory.path)")
            logger.info("PostgreSQL stopped", metadata: ["dataDirectory": "\(dataDirectory.path)"])
            port = nil
        }
    }

    /// Whether a server is running on this data directory.
    public var isRunning: Bool {
        state.withLock { _ in
            guard let tools = try? Tools.prepare() else { return false }
            return (try? runningServerPort(tools)) != nil
        }
    }

    /// The port of the server started by this instance, if running.
    public var port: Int? { state.withLock { $0 } }

    /// The URI for the `quotevault` database on `port` (the password is hexadecimal: nothing to escape). The
    /// server listens on loopback only and has neither TLS nor GSSAPI, so libpq is told not to ask for them
    /// (each connect would otherwise spend a round trip on each refusal).
    public static func url(port: Int, password: String) -> String {
        "postgresql://\(user):\(password)@127.0.0.1:\(port)/\(database)?sslmode=disable&gssencmode=disable"
    }

    /// The generated superuser password, kept with the data (nil before the first start).
    public var password: String? {
        (try? String(contentsOf: secretFile, encoding: .utf8)).map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    private var secretFile: URL { dataDirectory.appendingPathComponent("embedded.secret") }

    /// The directory holding initdb and pg_ctl: the newest `/usr/lib/postgresql/*/bin`,
    /// else the first PATH entry with both, else `pg_config --bindir`.
    public static func findBinaries() throws -> URL {
        let fileManager = FileManager.default
        func hasTools(_ directory: String) -> Bool {
            ["initdb", "pg_ctl", "postgres"].allSatisfy { fileManager.isExecutableFile(atPath: directory + "/" + $0) }
        }
        let debianRoot = "/usr/lib/postgresql"
        let versions = ((try? fileManager.contentsOfDirectory(atPath: debianRoot)) ?? [])
            .compactMap { name in Double(name).map { (version: $0, name: name) } }
            .sorted { $0.version > $1.version }
        for version in versions where hasTools("\(debianRoot)/\(version.name)/bin") {
            return URL(fileURLWithPath: "\(debianRoot)/\(version.name)/bin")
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) where !directory.isEmpty && hasTools(directory) {
            return URL(fileURLWithPath: directory)
        }
        let runner = CommandRunner(runAs: nil, binDirectory: URL(fileURLWithPath: "/usr/bin"))
        if let pgConfig = findExecutable("pg_config"),
            let bindir = try? runner.check(URL(fileURLWithPath: pgConfig), ["--bindir"], failure: "pg_config")
        {
            let directory = bindir.trimmingCharacters(in: .whitespacesAndNewlines)
            if hasTools(directory) { return URL(fileURLWithPath: directory) }
        }
        throw EmbeddedPostgresError(
            """
            PostgreSQL server binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin, PATH or \
            pg_config --bindir; install the postgresql package
            """)
    }

    // MARK: Steps

    /// Creates the directory and, when running as root, hands it to the postgres user and
    /// checks that user can reach it through every parent directory.
    private func prepareDataDirectory(_ tools: Tools) throws {
        let fileManager = FileManager.default
        let path = dataDirectory.path
        if !fileManager.fileExists(atPath: path) {
            try fileManager.createDirectory(
                at: dataDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        guard let runAs = tools.runner.runAs else { return }
        try handSecretOver(tools)  // written by root before this was done
        let attributes = try fileManager.attributesOfItem(atPath: path)
        if (attributes[.ownerAccountID] as? NSNumber)?.uint32Value != runAs.uid {
            try chownRecursively(dataDirectory, to: runAs)
        }
        let test = URL(fileURLWithPath: findExecutable("test") ?? "/usr/bin/test")
        let reachable = try tools.runner.run(test, ["-w", path, "-a", "-x", path])
        guard reachable.status == 0 else {
            // Name the first parent the user cannot pass through, from the root down.
            let parents = sequence(first: dataDirectory.deletingLastPathComponent()) { $0.deletingLastPathComponent() }
            let ancestors = parents.prefix(64).prefix { $0.path != "/" }.reversed()
            let firstBlocked = try ancestors.first { try tools.runner.run(test, ["-x", $0.path]).status != 0 }
            throw EmbeddedPostgresError(
                "user '\(runAs.name)' (which runs PostgreSQL because this process is root) cannot reach \(path)"
                    + (firstBlocked.map {
                        """
                        : \($0.path) is not traversable; use a directory like /var/lib/quotevault or run \
                        chmod o+x \($0.path)
                        """
                    } ?? ""))
        }
    }

    private func initialise(_ tools: Tools) throws {
        logger.info("initialising a PostgreSQL cluster", metadata: ["dataDirectory": "\(dataDirectory.path)"])
        let password = Self.generatePassword()
        // initdb reads the password from a file: a private one, readable by whoever runs initdb, deleted after.
        let passwordFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "embedded-postgres-\(UUID().uuidString).pw")
        try Self.writePrivately(password, to: passwordFile)
        defer { try? FileManager.default.removeItem(at: passwordFile) }
        try tools.runner.runAs?.own(passwordFile.path)
        try tools.runner.check(
            tools.initdb,
            // Collation C (byte order: fast, stable), but character classes from C.UTF-8 so that lower(),
            // upper() and ILIKE treat non-ASCII letters as letters (É matches é in search).
            [
                "-D", dataDirectory.path, "-U", Self.user, "--auth=scram-sha-256", "--pwfile=\(passwordFile.path)",
                "--encoding=UTF8", "--locale=C", "--lc-ctype=C.UTF-8",
            ],
            failure: "initdb failed for \(dataDirectory.path)")
        try writeSecret(password, tools)
        try writeAuthentication(tools)
        // Settings that change per start (the port) live in embedded.conf, rewritten each time.
        let configuration = dataDirectory.appendingPathComponent("postgresql.conf")
        let existing = try String(contentsOf: configuration, encoding: .utf8)
        try writeOwnedFile(
            "postgresql.conf", tools: tools,
            contents: existing + """

                # Added by EmbeddedPostgres.
                include_if_exists = 'embedded.conf'

                """)
    }

    /// Starts the server on the requested, remembered or a fresh port; returns the port.
    private func startServer(_ tools: Tools) throws -> Int {
        let pidFile = dataDirectory.appendingPathComponent("postmaster.pid")
        if FileManager.default.fileExists(atPath: pidFile.path) {
            // Left by a crash (runningServerPort found no live postmaster for it). PostgreSQL
            // usually copes, but not if the PID now belongs to another postgres-owned process.
            logger.info("removing a stale postmaster.pid", metadata: ["dataDirectory": "\(dataDirectory.path)"])
            try FileManager.default.removeItem(at: pidFile)
        }
        var lastError: EmbeddedPostgresError?
        for attempt in 0..<3 {
            let port = try choosePort(fresh: attempt > 0)
            try writeOwnedFile("embedded.conf", tools: tools, contents: try configuration(port: port))
            let result = try tools.runner.run(
                tools.pgCtl, ["start", "-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60", "-s"])
            if result.status == 0 {
                try? String(port).write(to: portFile, atomically: true, encoding: .utf8)
                logger.info(
                    "PostgreSQL started", metadata: ["port": "\(port)", "dataDirectory": "\(dataDirectory.path)"])
                return port
            }
            let log = (try? String(contentsOf: logFile, encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
            lastError = EmbeddedPostgresError(
                "pg_ctl start failed for \(dataDirectory.path) on port \(port); see \(logFile.path)",
                output: result.output + log)
            // Only a port lost to another process is worth another try, and only if we chose it.
            guard requestedPort == nil, log.contains("could not bind") || log.contains("already in use") else { break }
        }
        throw lastError ?? EmbeddedPostgresError("pg_ctl start failed for \(dataDirectory.path)")
    }

    /// embedded.conf: where to listen, plus the caller's settings, quoted for postgresql.conf.
    private func configuration(port: Int) throws -> String {
        var lines = [
            "# Rewritten by EmbeddedPostgres at every start.",
            "listen_addresses = '127.0.0.1'",
            "unix_socket_directories = ''",
            "port = \(port)",
        ]
        for (name, value) in settings.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }),
                !value.contains("\n")
            else {
                throw EmbeddedPostgresError("invalid PostgreSQL setting \(name)")
            }
            let quoted = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
            lines.append("\(name) = '\(quoted)'")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private var portFile: URL { dataDirectory.appendingPathComponent("embedded.port") }

    private func choosePort(fresh: Bool) throws -> Int {
        if let requestedPort { return requestedPort }
        if !fresh, let text = try? String(contentsOf: portFile, encoding: .utf8),
            let remembered = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)),
            freeLoopbackPort(remembered) == remembered
        {
            return remembered
        }
        guard let port = freeLoopbackPort() else { throw EmbeddedPostgresError("no free TCP port on 127.0.0.1") }
        return port
    }

    /// The port of a live postmaster for this data directory, or nil.
    private func runningServerPort(_ tools: Tools) throws -> Int? {
        let status = try tools.runner.run(tools.pgCtl, ["status", "-D", dataDirectory.path])
        guard status.status == 0 else { return nil }
        // postmaster.pid: line 1 is the PID, line 4 the port.
        let pidFile = dataDirectory.appendingPathComponent("postmaster.pid")
        let lines = ((try? String(contentsOf: pidFile, encoding: .utf8)) ?? "").split(
            separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 3, let pid = Int(lines[0]), let port = Int(lines[3]) else { return nil }
        // A reused PID can make pg_ctl believe a crashed server still runs.
        #if os(Linux)
        let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
        guard command.hasPrefix("postgres") else { return nil }
        #endif
        return port
    }

    private func ensureDatabase(_ tools: Tools, port: Int, password: String) throws {
        let exists = try psql(
            "SELECT 1 FROM pg_database WHERE datname = '\(Self.database)'", tools, port: port, password: password,
            failure: "cannot query the embedded PostgreSQL on port \(port)")
        if exists.trimmingCharacters(in: .whitespacesAndNewlines) != "1" {
            try psql(
                "CREATE DATABASE \(Self.database)", tools, port: port, password: password,
                failure: "cannot create database \(Self.database)")
        }
    }

    /// Runs `sql` in database `postgres` as the superuser, over TCP; returns psql's unaligned output.
    @discardableResult
    private func psql(_ sql: String, _ tools: Tools, port: Int, password: String?, failure: String) throws -> String {
        let options = ["-X", "-q", "-t", "-A", "-h", "127.0.0.1", "-p", String(port), "-U", Self.user]
        return try tools.runner.check(
            tools.psql, options + ["-d", "postgres", "-c", sql], asPostgresUser: false,
            environment: password.map { ["PGPASSWORD=" + $0] } ?? [], failure: failure)
    }

    /// The superuser's password. A cluster initialised by an earlier version has none and trusts local TCP
    /// connections: it gets a generated password (set while trust still lets us in), then password
    /// authentication only, applied with a reload.
    private func ensurePassword(_ tools: Tools) throws -> String {
        if let password, !password.isEmpty { return password }
        guard let port = try runningServerPort(tools) else { throw EmbeddedPostgresError("PostgreSQL is not running") }
        logger.warning("the embedded PostgreSQL trusted local connections; setting a password and turning trust off")
        let password = Self.generatePassword()
        // The password is hexadecimal: nothing to quote.
        try psql(
            "ALTER ROLE \(Self.user) PASSWORD '\(password)'", tools, port: port, password: nil,
            failure: "cannot set the embedded PostgreSQL's password")
        try writeSecret(password, tools)
        try writeAuthentication(tools)
        try tools.runner.check(
            tools.pgCtl, ["reload", "-D", dataDirectory.path, "-s"], failure: "pg_ctl reload failed")
        return password
    }

    /// pg_hba.conf: only TCP from 127.0.0.1, with a password (SCRAM); no Unix socket is opened.
    private func writeAuthentication(_ tools: Tools) throws {
        try writeOwnedFile(
            "pg_hba.conf", tools: tools,
            contents: """
                # Written by EmbeddedPostgres: local TCP connections with a password (SCRAM-SHA-256), nothing else.
                host all all 127.0.0.1/32 scram-sha-256
                """)
    }

    /// The password, kept with the data, readable by this process's user only (and, when that is root, by the
    /// user running PostgreSQL, which owns the data anyway: a file backup then includes it).
    private func writeSecret(_ password: String, _ tools: Tools) throws {
        try Self.writePrivately(password, to: secretFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)
        try handSecretOver(tools)
    }

    /// Writes `password` and a newline to a new file only its owner may read.
    private static func writePrivately(_ password: String, to file: URL) throws {
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw EmbeddedPostgresError("cannot write \(file.path)") }
    }

    private func handSecretOver(_ tools: Tools) throws {
        guard FileManager.default.fileExists(atPath: secretFile.path) else { return }
        try tools.runner.runAs?.own(secretFile.path)
    }

    /// 32 random bytes as hexadecimal (`getrandom(2)` on Linux: cryptographically secure).
    private static func generatePassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Writes a file in the data directory, owned by the user running PostgreSQL.
    private func writeOwnedFile(_ name: String, tools: Tools, contents: String) throws {
        try tools.runner.writeOwned(contents, to: dataDirectory.appendingPathComponent(name), permissions: 0o600)
    }

    private func chownRecursively(_ directory: URL, to user: RunAs) throws {
        try user.own(directory.path)
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let relative = enumerator?.nextObject() as? String {
            try user.own(directory.path + "/" + relative, followingLinks: false)
        }
    }
}

/// The PostgreSQL tools and how to run them.
struct Tools {
    let initdb: URL
    let pgCtl: URL
    let psql: URL
    let runner: CommandRunner

    static func prepare() throws -> Tools {
        let bin = try EmbeddedPostgres.findBinaries()
        var psql = bin.appendingPathComponent("psql")
        if !FileManager.default.isExecutableFile(atPath: psql.path) {
            guard let found = findExecutable("psql") else {
                throw EmbeddedPostgresError(
                    "psql not found next to \(bin.path) or in PATH; install the PostgreSQL client")
            }
            psql = URL(fileURLWithPath: found)
        }
        return Tools(
            initdb: bin.appendingPathComponent("initdb"), pgCtl: bin.appendingPathComponent("pg_ctl"),
            psql: psql, runner: CommandRunner(runAs: try postgresUserIfRoot(), binDirectory: bin))
    }

    /// initdb, pg_ctl and postgres refuse to run as root; as root, use the `postgres` user.
    private static func postgresUserIfRoot() throws -> RunAs? {
        guard geteuid() == 0 else { return nil }
        guard let entry = getpwnam("postgres") else {
            throw EmbeddedPostgresError(
                """
                running as root, and PostgreSQL refuses to; there is no 'postgres' user to run it as. Create one \
                (useradd --system --user-group postgres) or run as an unprivileged user
                """)
        }
        return RunAs(name: "postgres", uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }
}
