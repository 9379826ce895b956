internal import COpenSSL

/// A failure reported by OpenSSL, carrying the messages drained from its
/// per-thread error queue at the moment of failure.
public struct OpenSSLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The OpenSSL function that reported failure, e.g. `"RAND_bytes"`.
    public let operation: String
    /// OpenSSL's own messages, oldest first; empty if the queue held none.
    public let details: [String]

    /// Creates an error; mostly for tests — the module builds these by draining OpenSSL's queue.
    public init(operation: String, details: [String]) {
        self.operation = operation
        self.details = details
    }

    public var description: String {
        details.isEmpty
            ? "\(operation) failed"
            : "\(operation) failed: \(details.joined(separator: "; "))"
    }

    /// Empties this thread's error queue so a later failure is not blamed on
    /// leftovers from unrelated code that ran earlier on the same thread.
    static func clearQueue() {
        ERR_clear_error()
    }

    /// Takes every queued error off this thread's queue (leaving it clean for the
    /// next caller) and wraps them. Call right after the failing C call, with no
    /// suspension point between, because the queue is per thread.
    static func drain(_ operation: String) -> OpenSSLError {
        var details: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            // Keep a handful: a runaway queue should not balloon an error value.
            guard details.count < 16 else { continue }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            details.append(message)
        }
        return OpenSSLError(operation: operation, details: details)
    }
}
