import Foundation

/// A frame as the server sent it.
public struct ReceivedFrame: Sendable, Equatable {
    public var opcode: UInt8
    public var fin: Bool
    public var payload: [UInt8]

    public var text: String { String(decoding: payload, as: UTF8.self) }
    /// A close frame's code (nil for another frame, or a close without one).
    public var closeCode: Int? {
        opcode == 0x8 && payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
    }
    /// A text frame's JSON object (vsn 1.0.0 Phoenix messages).
    public var json: [String: Any]? {
        guard opcode == 0x1 else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
    }
}

/// A WebSocket client over a raw socket, frame by frame: it can send what a well-behaved client would (masked,
/// whole or fragmented frames) and what a hostile one would (unmasked, oversize, bad UTF-8).
public final class WebSocketTestClient: @unchecked Sendable {
    // @unchecked: used by one test thread at a time.
    private let socket: Int32
    private var raw: [UInt8] = []
    public private(set) var status = 0
    public private(set) var headers: [(name: String, value: String)] = []
    public private(set) var body = ""
    /// The key sent, for checking `Sec-WebSocket-Accept`.
    public let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()

    /// Connects, sends the handshake (`extraHeaders` replace the defaults of the same name; a nil value drops
    /// one) and reads the answer's head.
    public init(
        port: Int, path: String, method: String = "GET", extraHeaders: [String: String?] = [:],
        source: String? = nil, receiveBuffer: Int? = nil
    ) throws {
        socket = try HTTPTestConnection.openReading(port: port, source: source, receiveBuffer: receiveBuffer)
        var fields: [String: String?] = [
            "Host": "127.0.0.1", "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": key,
        ]
        for (name, value) in extraHeaders { fields[name] = value }
        var head = "\(method) \(path) HTTP/1.1\r\n"
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            if let value { head += "\(name): \(value)\r\n" }
        }
        head += "\r\n"
        write(Array(head.utf8))
        try readHead()
    }

    deinit { Foundation.close(socket) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    private func readHead(within seconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let head = HTTPTestConnection.takeHead(&raw) {
                (status, headers) = head
                break
            }
            guard Date() < deadline, receive() != false else { throw HTTPTestError.timedOut }
        }
        guard status != 101, let length = header("Content-Length").flatMap(Int.init) else { return }
        while raw.count < length, Date() < deadline, receive() != nil {}
        body = String(decoding: raw.prefix(length), as: UTF8.self)
        raw.removeFirst(min(length, raw.count))
    }

    // MARK: sending

    /// One frame; `masked: false` breaks the protocol on purpose. `length` overrides the declared payload length.
    public func sendFrame(opcode: UInt8, payload: [UInt8], fin: Bool = true, masked: Bool = true) {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        if masked {
            let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        } else {
            bytes += payload
        }
        write(bytes)
    }

    public func send(text: String) { sendFrame(opcode: 0x1, payload: Array(text.utf8)) }

    /// A Phoenix message as vsn 1.0.0 sends it (a JSON object).
    public func send(json: [String: Any]) {
        send(text: String(decoding: try! JSONSerialization.data(withJSONObject: json), as: UTF8.self))
    }

    public func sendClose(code: Int = 1000) { sendFrame(opcode: 0x8, payload: [UInt8(code >> 8), UInt8(code & 0xFF)]) }

    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    // MARK: receiving

    /// The next frame within `seconds`; nil on timeout or once the server closed the socket.
    public func nextFrame(within seconds: Double = 10) -> ReceivedFrame? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let frame = takeFrame() { return frame }
            guard Date() < deadline else { return nil }
            if receive() == false { return takeFrame() }
        }
    }

    /// The next text frame's JSON object, skipping those `skip` accepts (e.g. other topics' messages).
    public func nextMessage(within seconds: Double = 10, skip: ([String: Any]) -> Bool = { _ in false })
        -> [String: Any]?
    {
        let deadline = Date().addingTimeInterval(seconds)
        while let frame = nextFrame(within: max(0, deadline.timeIntervalSinceNow)) {
            guard let message = frame.json else { continue }
            if !skip(message) { return message }
        }
        return nil
    }

    /// Whether the server sends nothing (no data frame) for `seconds`.
    public func staysQuiet(for seconds: Double, except skip: ([String: Any]) -> Bool = { _ in false }) -> Bool {
        nextMessage(within: seconds, skip: skip) == nil
    }

    /// Waits for the server to close: its close frame's code (nil if the socket closed without one or not in time).
    public func closeCode(within seconds: Double = 10) -> Int? {
        let deadline = Date().addingTimeInterval(seconds)
        while let frame = nextFrame(within: max(0, deadline.timeIntervalSinceNow)) {
            if frame.opcode == 0x8 { return frame.closeCode ?? 1005 }
        }
        return nil
    }

    /// Whether the server closed the socket (EOF) within `seconds`.
    public func isClosed(within seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if receive() == false { return true }
        }
        return false
    }

    private var eof = false

    /// Reads once; nil on timeout, false at end of stream.
    private func receive() -> Bool? {
        guard !eof else { return false }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            raw += buffer[..<count]
            return true
        }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return nil }
        eof = true
        return false
    }

    private func takeFrame() -> ReceivedFrame? {
        guard raw.count >= 2 else { return nil }
        var length = Int(raw[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard raw.count >= 4 else { return nil }
            length = Int(raw[2]) << 8 | Int(raw[3])
            offset = 4
        } else if length == 127 {
            guard raw.count >= 10 else { return nil }
            length = raw[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard raw.count >= offset + length else { return nil }
        let frame = ReceivedFrame(
            opcode: raw[0] & 0x0F, fin: raw[0] & 0x80 != 0, payload: Array(raw[offset..<offset + length]))
        raw.removeFirst(offset + length)
        return frame
    }
}
