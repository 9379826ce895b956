import HTTPServer

/// An export's body written as it is read from the database, a page at a time, so no export is held whole in
/// memory: the response goes out chunked (`Response.stream`), and `write` waits while the client has not taken
/// what was sent (the stream's buffer is bounded), so a slow download holds the database pages back, not memory.
final class DownloadStream: Sendable {
    /// What may wait for the client at once; a page of rows is sent in pieces no larger.
    static let bufferLimit = 256 * 1024
    /// A client that takes nothing for this long is cut off (its download fails, visibly truncated):
    /// `ConsoleExportLimits.stall`.
    let stallLimit: Duration

    let stream = EventStream(bufferLimit: DownloadStream.bufferLimit)

    init(stallLimit: Duration) { self.stallLimit = stallLimit }

    /// Sends `bytes` once the buffer has room for each piece; false when the client has gone or stalled (the
    /// writer then stops reading the database).
    func write(_ bytes: [UInt8]) async -> Bool {
        let piece = Self.bufferLimit / 4
        var start = 0
        while start < bytes.count {
            let end = min(start + piece, bytes.count)
            guard await room(for: end - start), stream.send(Array(bytes[start..<end])) else { return false }
            start = end
        }
        return true
    }

    /// Waits, polling, until `count` more bytes fit; false when the connection closed or the client stalled (its
    /// connection is then cut: ending the stream would send the last chunk, and the download would look whole).
    private func room(for count: Int) async -> Bool {
        let deadline = ContinuousClock.now + stallLimit
        while stream.bufferedBytes + count > Self.bufferLimit {
            guard stream.isOpen else { return false }
            guard ContinuousClock.now < deadline else {
                abort()
                return false
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return stream.isOpen
    }

    /// The body is complete: the response ends once the client has taken it.
    func finish() { stream.finish() }

    /// The body cannot be completed (the database failed midway): the connection is cut, so the client sees a
    /// failed download, not a short file that looks whole. Overfilling the buffer is how a stream is cut.
    func abort() {
        stream.send([UInt8](repeating: 0, count: Self.bufferLimit + 1))
    }
}
