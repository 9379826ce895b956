import Foundation

/// One server-sent event (or comment) as read off a stream.
public struct ReceivedEvent: Sendable, Equatable {
    public var name: String?
    public var data: String?
    public var comment: String?

    public init(name: String? = nil, data: String? = nil, comment: String? = nil) {
        self.name = name
        self.data = data
        self.comment = comment
    }

    /// The `next` token of a `changed` event's data.
    public var next: String? {
        guard let data, let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
        else { return nil }
        return object["next"] as? String
    }
}

/// A client of a `text/event-stream` answer over a raw socket, reading it incrementally: the head, then each
/// event as it comes (chunked transfer coding undone).
public final class EventStreamTestClient: @unchecked Sendable {
    // @unchecked: used by one test thread at a time.
    private let socket: Int32
    private var raw: [UInt8] = []
    private var text: [UInt8] = []
    private var ended = false
    /// Whether the last (empty) chunk arrived: the answer ended whole, not cut off.
    public private(set) var completed = false
    public private(set) var status = 0
    public private(set) var headers: [(name: String, value: String)] = []

    /// Connects and sends `GET path`; `receiveBuffer` shrinks the socket's receive buffer (a consumer that
    /// never reads then fills the server's side sooner).
    public init(
        port: Int, path: String, headers: [String: String], source: String? = nil, receiveBuffer: Int? = nil
    ) throws {
        socket = try HTTPTestConnection.openReading(port: port, source: source, receiveBuffer: receiveBuffer)
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8)
        _ = bytes.withUnsafeBytes { Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    deinit { Foundation.close(socket) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Reads the status line and headers (within `seconds`).
    @discardableResult
    public func readHead(within seconds: Double = 10) throws -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let head = HTTPTestConnection.takeHead(&raw) {
                (status, headers) = head
                break
            }
            guard Date() < deadline, receive() else { throw HTTPTestError.timedOut }
        }
        return status
    }

    /// The next event or comment, waiting at most `seconds`; nil when the stream ended (or nothing came).
    public func next(within seconds: Double = 10) -> ReceivedEvent? {
        let deadline = Date().addingTimeInterval(seconds)
        let separator = Array("\n\n".utf8)
        while true {
            dechunk()
            if let range = text.firstRange(of: separator) {
                let block = String(decoding: text[..<range.lowerBound], as: UTF8.self)
                text.removeFirst(range.upperBound)
                var event = ReceivedEvent()
                for line in block.split(separator: "\n") {
                    if line.hasPrefix(":") { event.comment = line.dropFirst().trimmingCharacters(in: .whitespaces) }
                    if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
                }
                return event
            }
            guard !ended, Date() < deadline else { return nil }
            if !receive() { ended = true }
        }
    }

    /// The next `event:` (comments skipped) within `seconds`.
    public func nextEvent(within seconds: Double = 10) -> ReceivedEvent? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, let event = next(within: deadline.timeIntervalSinceNow) {
            if event.name != nil { return event }
        }
        return nil
    }

    /// Whether the server ends the stream within `seconds` (events still arriving meanwhile are read and dropped).
    public func ends(within seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !ended, Date() < deadline {
            if !receive() { ended = true }
        }
        return ended
    }

    /// Reads what is there; false at the end of the stream (EOF, reset, or the last chunk). A receive that
    /// times out is not the end.
    private func receive() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
        if count == 0 { return false }
        raw += chunk[..<count]
        if status != 0 { dechunk() }
        return !ended
    }

    /// Moves whole chunks from `raw` to `text`; the last (empty) chunk ends the stream.
    private func dechunk() {
        guard status != 0 else { return }
        let crlf = Array("\r\n".utf8)
        while let line = raw.firstRange(of: crlf) {
            guard let size = Int(String(decoding: raw[..<line.lowerBound], as: UTF8.self), radix: 16) else { return }
            if size == 0 {
                ended = true
                completed = true
                return
            }
            guard raw.count >= line.upperBound + size + 2 else { return }
            text += raw[line.upperBound..<line.upperBound + size]
            raw.removeFirst(line.upperBound + size + 2)
        }
    }
}
