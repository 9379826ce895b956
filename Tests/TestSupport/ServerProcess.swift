import Foundation

/// The real `quote-server` executable run as a child process, for tests of commands, signals and the
/// embedded database. Output goes to a file the test can read.
public final class ServerProcess: @unchecked Sendable {
    // @unchecked: used from one test at a time.
    public let pid: pid_t
    public let outputPath: String
    private var exitStatus: Int32?

    /// The executable built beside the test bundle (`swift build --build-tests` builds both).
    public static var executable: URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return bundle.deletingLastPathComponent().appendingPathComponent("quote-server")
    }

    /// Starts `quote-server ARGUMENTS` with exactly `environment` (plus PATH).
    public init(_ arguments: [String], environment: [String: String]) throws {
        outputPath =
            FileManager.default.temporaryDirectory.appendingPathComponent("quote-server-\(UUID().uuidString).log").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var environment = environment
        environment["PATH"] = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        let argv = [Self.executable.path] + arguments
        let env = environment.map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { for pointer in cArgv + cEnv { free(pointer) } }
        let result = posix_spawn(&child, Self.executable.path, &actions, nil, cArgv, cEnv)
        guard result == 0 else { throw HTTPTestError.malformedResponse("cannot start quote-server: \(result)") }
        pid = child
    }

    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The port from the server's `listening` log line, waiting up to `timeout` for it.
    public func waitForPort(timeout: Duration = .seconds(60)) async throws -> Int {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            for line in output.split(separator: "\n") where line.contains("\"msg\":\"listening\"") {
                if let range = line.range(of: #""port":(\d+)"#, options: .regularExpression) {
                    return Int(line[range].dropFirst(7))!
                }
            }
            if try poll() != nil { throw HTTPTestError.malformedResponse("quote-server exited early:\n\(output)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HTTPTestError.timedOut
    }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// The exit status if the process has ended.
    public func poll() throws -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid else { return nil }
        // WIFEXITED / WEXITSTATUS are macros Swift does not import.
        let signalled = status & 0x7f
        exitStatus = signalled == 0 ? (status >> 8) & 0xff : 128 + signalled
        return exitStatus
    }

    /// Waits for the exit status, at most `timeout`; kills the process (and returns nil) after that.
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = try poll() { return status }
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, nil, 0)
        return nil
    }
}
