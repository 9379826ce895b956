/// RFC 6455 framing, written here rather than taken from hummingbird-project/swift-websocket's `WSCore`: WSCore
/// frames `NIOCore.ByteBuffer`s inside a NIO channel pipeline, while the upgraded sockets here are plain file
/// descriptors read by one epoll thread. A codec of its own needs no NIO in this module and is a page long.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Close codes the server sends (RFC 6455 §7.4.1).
public enum WebSocketCloseCode: UInt16, Sendable {
    case normal = 1000
    case goingAway = 1001
    case protocolError = 1002
    case unsupportedData = 1003
    case invalidPayload = 1007
    case policyViolation = 1008
    case messageTooBig = 1009
    case internalError = 1011
    /// The server is busy: the client should come back later (RFC 6455's registry).
    case tryAgainLater = 1013
}

/// One frame as read off the wire (payload already unmasked).
struct WebSocketFrame: Equatable {
    var fin: Bool
    var opcode: WebSocketOpcode
    var payload: [UInt8]
}

/// Reads frames from a client's bytes as they arrive. A client frame must be masked (§5.1), reserved bits must be
/// clear (no extension is negotiated) and a control frame must be whole and at most 125 bytes (§5.5).
struct WebSocketFrameDecoder {
    enum Failure: Error, Equatable {
        case protocolError(String)
        case tooBig
    }

    /// Largest payload of one frame; a longer one is refused from its header, before its bytes are read.
    let maxFramePayload: Int
    private var buffer: [UInt8] = []
    private var start = 0

    init(maxFramePayload: Int) {
        self.maxFramePayload = maxFramePayload
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0 && start == buffer.count {
            // An idle connection keeps a small buffer, not the largest message it ever received.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 4096)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received but not yet framed (bounded: at most one frame's header and payload).
    var bufferedCount: Int { buffer.count - start }

    /// The next whole frame, or nil until more bytes arrive.
    mutating func next() throws(Failure) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        guard first & 0x70 == 0 else { throw .protocolError("reserved bits set") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { throw .protocolError("unknown opcode") }
        let fin = first & 0x80 != 0
        guard second & 0x80 != 0 else { throw .protocolError("client frames must be masked") }
        var length = Int(second & 0x7F)
        var offset = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
            offset = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            var value: UInt64 = 0
            for index in 2..<10 { value = value << 8 | UInt64(buffer[start + index]) }
            guard value <= UInt64(Int32.max) else { throw .tooBig }
            length = Int(value)
            offset = 10
        }
        if opcode.isControl {
            guard fin else { throw .protocolError("fragmented control frame") }
            guard length <= 125 else { throw .protocolError("control frame over 125 bytes") }
        }
        guard length <= maxFramePayload else { throw .tooBig }
        guard available >= offset + 4 + length else { return nil }
        let mask = (
            buffer[start + offset], buffer[start + offset + 1], buffer[start + offset + 2], buffer[start + offset + 3]
        )
        let payloadStart = start + offset + 4
        var payload = Array(buffer[payloadStart..<payloadStart + length])
        for index in payload.indices {
            switch index & 3 {
            case 0: payload[index] ^= mask.0
            case 1: payload[index] ^= mask.1
            case 2: payload[index] ^= mask.2
            default: payload[index] ^= mask.3
            }
        }
        start = payloadStart + length
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }
}

enum WebSocketFrameEncoder {
    /// A server frame: unmasked, whole (FIN set).
    static func frame(_ opcode: WebSocketOpcode, _ payload: some Collection<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 10)
        bytes.append(0x80 | opcode.rawValue)
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes.append(126)
            bytes.append(UInt8(payload.count >> 8))
            bytes.append(UInt8(payload.count & 0xFF))
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        bytes.append(contentsOf: payload)
        return bytes
    }

    static func close(_ code: WebSocketCloseCode, reason: String = "") -> [UInt8] {
        // A close frame's payload is at most 125 bytes: the code and a reason cut to fit.
        let reasonBytes = Array(reason.utf8.prefix(123))
        return frame(.close, [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)] + reasonBytes)
    }
}
