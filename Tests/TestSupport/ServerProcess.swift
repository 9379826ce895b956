import Foundation

/// The real `quote-server` executable run as a child process, for tests of commands, signals and the
/// embedded database. Output goes to a file the test can read.
public final class ServerProcess: @unchecked Sendable {
    // @unchecked: used from one test at a time.
    public let pid: pid_t
    public let outputPath: String
    private var exitStatus: Int32?
    /// With `terminal`: the pseudo-terminal's master side, whose slave is the process's stderr.
    private let terminalMaster: Int32?
    private var terminalBytes: [UInt8] = []

    /// The executable built beside the test bundle (`swift build --build-tests` builds both).
    public static var executable: URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return bundle.deletingLastPathComponent().appendingPathComponent("quote-server")
    }

    /// Starts `quote-server ARGUMENTS` with exactly `environment` (plus PATH). With `terminal`, stderr is a
    /// pseudo-terminal (read by `terminalOutput()`), as when a person runs the command; else it joins stdout.
    public init(_ arguments: [String], environment: [String: String], terminal: Bool = false) throws {
        outputPath =
            FileManager.default.temporaryDirectory.appendingPathComponent("quote-server-\(UUID().uuidString).log").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if terminal {
            // /dev/ptmx by hand (posix_openpt and ptsname are not visible to Swift here): unlock the slave, ask its
            // number (TIOCSPTLCK, TIOCGPTN; the same values on x86_64 and arm64).
            let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK)
            var unlock: Int32 = 0
            var number: Int32 = 0
            guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0
            else { throw HTTPTestError.malformedResponse("cannot open a pseudo-terminal") }
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/pts/\(number)", O_RDWR | O_NOCTTY, 0)
            terminalMaster = master
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            terminalMaster = nil
        }
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

    deinit {
        if let terminalMaster { close(terminalMaster) }
    }

    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Everything the process wrote to its terminal so far (empty without `terminal`).
    public func terminalOutput() -> String {
        guard let terminalMaster else { return "" }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(terminalMaster, &buffer, buffer.count)
            guard count > 0 else { break }
            terminalBytes += buffer[0..<count]
        }
        return String(decoding: terminalBytes, as: UTF8.self)
    }

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
