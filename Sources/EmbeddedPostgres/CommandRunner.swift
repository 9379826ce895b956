import Foundation

/// The outcome of a finished command.
struct CommandResult {
    var status: Int32
    var output: String
}

/// Whom to run PostgreSQL's tools as: initdb, pg_ctl and postgres refuse to run as root.
struct RunAs: Sendable {
    let name: String
    let uid: uid_t
    let gid: gid_t

    /// Gives `path` to this user; with `followingLinks` false, a symbolic link itself rather than its target.
    func own(_ path: String, followingLinks: Bool = true) throws {
        guard (followingLinks ? chown(path, uid, gid) : lchown(path, uid, gid)) == 0 else {
            throw EmbeddedPostgresError("cannot chown \(path) to \(name)")
        }
    }
}

/// Runs tools with Foundation `Process`, optionally as another user.
struct CommandRunner: Sendable {
    /// Set when running as root: commands are wrapped in setpriv (or runuser).
    let runAs: RunAs?
    /// Prepended to PATH so the tools find each other.
    let binDirectory: URL

    /// Runs `executable` with `arguments` and waits for it. Output (stdout and stderr) goes
    /// to a temporary file rather than a pipe: pg_ctl starts a daemon, and a pipe inherited
    /// by a daemon would never reach end-of-file.
    /// - Parameter extraEnvironment: `NAME=value` entries added to the fixed environment (e.g. `PGPASSWORD`).
    func run(
        _ executable: URL, _ arguments: [String], asPostgresUser: Bool = true, extraEnvironment: [String] = []
    ) throws -> CommandResult {
        var launchPath = executable.path
        var launchArguments = arguments
        if asPostgresUser, let runAs {
            if let setpriv = findExecutable("setpriv") {
                launchArguments =
                    ["--reuid=\(runAs.uid)", "--regid=\(runAs.gid)", "--init-groups", "--", launchPath]
                    + arguments
                launchPath = setpriv
            } else if let runuser = findExecutable("runuser") {
                launchArguments = ["-u", runAs.name, "--", launchPath] + arguments
                launchPath = runuser
            } else {
                throw EmbeddedPostgresError(
                    "running as root, but neither setpriv nor runuser is installed to run PostgreSQL as '\(runAs.name)'"
                )
            }
        }

        let outputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("embedded-postgres-\(UUID().uuidString).out")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
            throw EmbeddedPostgresError("cannot create a temporary file at \(outputURL.path)")
        }
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let outputHandle = try FileHandle(forWritingTo: outputURL)
        defer { try? outputHandle.close() }

        // A fixed environment: no PGDATA/PGPORT/PGHOST from the caller's shell leaks in,
        // and the C locale keeps messages and initdb's defaults predictable.
        let environment =
            [
                "PATH=" + binDirectory.path + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
                "LC_ALL=C",
                "LANG=C",
                "PGCONNECT_TIMEOUT=10",
            ] + extraEnvironment
        let status = try spawnAndWait(
            launchPath, arguments: launchArguments, environment: environment,
            output: outputHandle.fileDescriptor)
        let output = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return CommandResult(status: status, output: output)
    }

    /// Writes `contents` to `file` with `permissions`, owned by the user running PostgreSQL.
    func writeOwned(_ contents: String, to file: URL, permissions: Int) throws {
        try contents.write(to: file, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: file.path)
        try runAs?.own(file.path)
    }

    /// Creates `directory` with `permissions`, owned by the user running PostgreSQL. Missing parents are made
    /// 0755, passable by that user: a parent made with the directory's own mode (0750 by root) would lock it out
    /// (`quote-server backups` after the data directory was deleted made it root:root 0750, and pgBackRest failed).
    func createOwnedDirectory(_ directory: URL, permissions: Int) throws {
        let fileManager = FileManager.default
        let parent = directory.deletingLastPathComponent()
        if !fileManager.fileExists(atPath: parent.path) {
            try fileManager.createDirectory(
                at: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        if !fileManager.fileExists(atPath: directory.path) {
            try fileManager.createDirectory(
                at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: permissions])
        }
        try runAs?.own(directory.path)
    }

    /// Whether the user running the tools may write into `directory` (and pass through it and its parents).
    func canWrite(_ directory: URL) throws -> Bool {
        let test = URL(fileURLWithPath: findExecutable("test") ?? "/usr/bin/test")
        return try run(test, ["-w", directory.path, "-a", "-x", directory.path]).status == 0
    }

    /// The name of the user running the tools.
    var userName: String {
        if let runAs { return runAs.name }
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "uid \(geteuid())" }
        return String(cString: name)
    }

    /// Runs and throws with `failure` and the output unless the command exits 0.
    @discardableResult
    func check(
        _ executable: URL, _ arguments: [String], asPostgresUser: Bool = true, environment: [String] = [],
        failure: String
    ) throws -> String {
        let result = try run(executable, arguments, asPostgresUser: asPostgresUser, extraEnvironment: environment)
        guard result.status == 0 else {
            throw EmbeddedPostgresError("\(failure) (exit status \(result.status))", output: result.output)
        }
        return result.output
    }
}

/// The first executable named `name` in the usual system directories or PATH.
func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let directories = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] + path.split(separator: ":").map(String.init)
    for directory in directories where !directory.isEmpty {
        let candidate = directory + "/" + name
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}
