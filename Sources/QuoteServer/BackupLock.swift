import Foundation

/// One backup or restore at a time per data directory, across processes (the server's schedule and the
/// commands): an exclusive flock(2) on a file beside the data, released when the holder ends or exits.
final class BackupLock {
    private let descriptor: Int32

    /// Takes the lock, or throws at once when another process holds it.
    init(_ dataDirectory: URL) throws {
        let path = dataDirectory.appendingPathComponent("backup.lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw BackupCommandError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw BackupCommandError(
                "another backup or restore is running on \(dataDirectory.path); try again when it ends")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A backup command's refusal: printed as is, exit status 1.
struct BackupCommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
