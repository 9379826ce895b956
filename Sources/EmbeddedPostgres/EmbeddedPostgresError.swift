/// Why the embedded cluster could not be found, initialised, started or stopped.
/// The message says what to do; `output` holds the tool's output for the logs.
public struct EmbeddedPostgresError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// Output of the failing command (initdb, pg_ctl, psql), if any.
    public var output: String?

    public init(_ message: String, output: String? = nil) {
        self.message = message
        self.output = output
    }

    public var description: String {
        guard let output, !output.isEmpty else { return message }
        return message + "\n" + output
    }
}
