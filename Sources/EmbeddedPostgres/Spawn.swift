import Foundation

/// posix_spawn + waitpid, instead of Foundation's `Process`: on Linux, `Process.waitUntilExit()` was seen to
/// hang forever after `pg_ctl` (which leaves a daemon behind) had exited, its zombie never reaped. Blocking
/// `waitpid` on the calling thread has no such failure mode.
enum Spawn {
    /// Runs `path` with `arguments` and `environment`, stdin from /dev/null, stdout and stderr appended to
    /// `outputPath` (a file, not a pipe: a daemon inheriting a pipe would keep it open forever), working
    /// directory `/` (the postgres user may not enter the caller's). Returns the exit status.
    static func runAndWait(_ path: String, arguments: [String], environment: [String], outputPath: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        // `env -C /` changes directory in the child (glibc's addchdir_np is not visible to Swift here).
        let argv = ["/usr/bin/env", "-C", "/", path] + arguments
        var pid: pid_t = 0
        let result = withCStrings(argv) { argvPointers in
            withCStrings(environment) { environmentPointers in
                posix_spawn(&pid, "/usr/bin/env", &actions, nil, argvPointers, environmentPointers)
            }
        }
        guard result == 0 else {
            throw EmbeddedPostgresError("cannot run \(path): \(String(cString: strerror(result)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw EmbeddedPostgresError("waitpid failed for \(path): errno \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS are macros Swift does not import.
        let signalled = status & 0x7f
        return signalled == 0 ? (status >> 8) & 0xff : 128 + signalled
    }

    /// A NULL-terminated C string array valid for the duration of `body` only.
    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
