#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Why not Foundation's Process: on Linux it learns that a child exited when a socket the
// child inherits reaches end-of-file. `pg_ctl start` leaves a daemon (the postmaster) that
// inherits that socket too, so `waitUntilExit()` would block until the server stops.
// Here the child gets only stdin (/dev/null), stdout and stderr, and we wait with waitpid.

/// Runs `path` with `arguments` in `/`, stdout and stderr to `output`, and returns its exit
/// status (128 + signal number if it was killed).
func spawnAndWait(_ path: String, arguments: [String], environment: [String], output: Int32) throws -> Int32 {
    #if canImport(Darwin)
    var actions: posix_spawn_file_actions_t? = nil
    var attributes: posix_spawnattr_t? = nil
    #else
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, output, 1)
    posix_spawn_file_actions_adddup2(&actions, output, 2)
    // The postgres user may not be allowed into the caller's working directory.
    #if os(Linux)
    _ = spawnExtensions.addChdir?(&actions, "/")
    #endif

    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // The calling thread may block signals (Dispatch and test runners do); a server that
    // inherited that mask would ignore pg_ctl stop. Start from defaults and an empty mask.
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
    #if canImport(Darwin)
    flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    #else
    // Nothing but 0-2 reaches the child (no sockets, no other test's files).
    if let closeFrom = spawnExtensions.addCloseFrom {
        _ = closeFrom(&actions, 3)
    } else {
        for descriptor in openDescriptors() where descriptor > 2 && descriptor != output {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }
    #endif
    posix_spawnattr_setflags(&attributes, Int16(flags))

    var pid = pid_t()
    let spawned = withCStringArray([path] + arguments) { argv in
        withCStringArray(environment) { envp in
            posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        }
    }
    guard spawned == 0 else {
        throw EmbeddedPostgresError("cannot run \(path): \(String(cString: strerror(spawned)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 {
        guard errno == EINTR else { throw EmbeddedPostgresError("waitpid failed for \(path): errno \(errno)") }
    }
    // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

/// glibc's posix_spawn extensions (2.29+, 2.34+), looked up at run time: Swift's Glibc
/// module does not import them (they need _GNU_SOURCE), and this target has no C shim.
private struct SpawnExtensions: @unchecked Sendable {
    // @unchecked: C function pointers (not Sendable-checked), looked up once and never changed.
    typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    let addChdir: AddChdir?
    let addCloseFrom: AddCloseFrom?

    init() {
        #if os(Linux)
        let handle = dlopen(nil, RTLD_NOW)
        addChdir = dlsym(handle, "posix_spawn_file_actions_addchdir_np").map { unsafeBitCast($0, to: AddChdir.self) }
        addCloseFrom = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: AddCloseFrom.self)
        }
        #else
        addChdir = nil
        addCloseFrom = nil
        #endif
    }
}

private let spawnExtensions = SpawnExtensions()

/// The descriptors open in this process (fallback when closefrom is unavailable).
private func openDescriptors() -> [Int32] {
    guard let directory = opendir("/proc/self/fd") else { return [] }
    defer { closedir(directory) }
    var descriptors = [Int32]()
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if let descriptor = Int32(name) { descriptors.append(descriptor) }
    }
    return descriptors
}

/// Calls `body` with a NULL-terminated `char *[]` of `strings`, valid only inside `body`.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var storage = [CChar]()
    var offsets = [Int]()
    for string in strings {
        offsets.append(storage.count)
        storage.append(contentsOf: string.utf8CString)
    }
    return storage.withUnsafeMutableBufferPointer { buffer in
        var pointers: [UnsafeMutablePointer<CChar>?] = offsets.map { buffer.baseAddress! + $0 }
        pointers.append(nil)
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
