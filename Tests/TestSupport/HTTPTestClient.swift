import Foundation

/// A response as read off the wire by `HTTPTestClient`.
public struct HTTPTestResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as a client reads it: decompressed when the server sent it gzipped (as every HTTP client that
    /// sends `Accept-Encoding: gzip` does); `body` stays the bytes on the wire.
    public var content: [UInt8] {
        guard header("Content-Encoding")?.lowercased() == "gzip" else { return body }
        return gunzip(body) ?? body
    }

    public var text: String { String(decoding: content, as: UTF8.self) }

    /// The body as a JSON object (fails the caller's expectation by throwing when it is not one).
    public func jsonObject() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(content)) as? [String: Any] else {
            throw HTTPTestError.notAnObject(text)
        }
        return object
    }

    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(content))
    }
}

public enum HTTPTestError: Error {
    case connectFailed(Int32)
    case timedOut
    case malformedResponse(String)
    case notAnObject(String)
}

/// A deliberately plain HTTP/1.1 client over a POSIX socket, so tests control every byte they send
/// (including malformed requests) and talk to the real server over loopback.
public struct HTTPTestClient: Sendable {
    public let host: String
    public let port: Int

    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    /// Sends one request on a new connection and reads the response.
    public func send(
        _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil
    ) throws -> HTTPTestResponse {
        let connection = try HTTPTestConnection(host: host, port: port)
        defer { connection.close() }
        return try connection.send(method, path, headers: headers, body: body)
    }

    /// Sends a JSON body (`Content-Type: application/json`).
    public func send(
        _ method: String, _ path: String, json: [String: Any], headers: [String: String] = [:]
    ) throws -> HTTPTestResponse {
        var headers = headers
        headers["Content-Type"] = headers["Content-Type"] ?? "application/json"
        return try send(method, path, headers: headers, body: Array(try JSONSerialization.data(withJSONObject: json)))
    }

    public func get(_ path: String, headers: [String: String] = [:]) throws -> HTTPTestResponse {
        try send("GET", path, headers: headers)
    }
}

/// One TCP connection; several requests may be sent on it in turn (keep-alive).
public final class HTTPTestConnection: @unchecked Sendable {
    // @unchecked: used by one test thread at a time.
    private let socket: Int32
    private var buffer: [UInt8] = []

    /// - Parameter source: a loopback address to connect from (e.g. `127.0.0.2`, another client to the server).
    public init(host: String = "127.0.0.1", port: Int, timeoutSeconds: Int = 15, source: String? = nil) throws {
        socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HTTPTestError.connectFailed(errno) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let socket = self.socket
        do {
            if let source { try Self.call(bind, socket, source, 0) }
            try Self.call(connect, socket, host, port)
        } catch {
            Foundation.close(socket)
            throw error
        }
    }

    /// A socket connected to `127.0.0.1:port` (from `source` if given) that waits at most 200 ms per read, for
    /// clients that read an answer as it comes; `receiveBuffer` shrinks its receive buffer (a consumer that never
    /// reads then fills the server's side sooner).
    static func openReading(port: Int, source: String?, receiveBuffer: Int?) throws -> Int32 {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HTTPTestError.connectFailed(errno) }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        do {
            if let source { try call(bind, socket, source, 0) }
            try call(Foundation.connect, socket, "127.0.0.1", port)
        } catch {
            Foundation.close(socket)
            throw error
        }
        return socket
    }

    /// Takes an answer's status line and header fields off the front of `raw`, once they are all there.
    static func takeHead(_ raw: inout [UInt8]) -> (status: Int, headers: [(name: String, value: String)])? {
        guard let end = raw.firstRange(of: Array("\r\n\r\n".utf8))?.lowerBound else { return nil }
        var lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        raw.removeFirst(end + 4)
        let status = Int(lines.removeFirst().split(separator: " ")[1]) ?? 0
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return (status, headers)
    }

    /// Calls `bind` or `connect` with the IPv4 address `host:port`.
    static func call(
        _ function: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32, _ socket: Int32, _ host: String, _ port: Int
    ) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                function(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw HTTPTestError.connectFailed(errno) }
    }

    public func close() { Foundation.close(socket) }

    /// Half-closes: the server sees end of input, so a request cut short is answered or dropped at once
    /// instead of waiting for the connection timeout.
    public func finishWriting() { shutdown(socket, Int32(SHUT_WR)) }

    /// Writes raw bytes; false when the peer closed.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    public func send(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws
        -> HTTPTestResponse
    {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, headers.keys.first(where: { $0.lowercased() == "content-length" }) == nil {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        write(Array(head.utf8) + (body ?? []))
        return try readResponse(method: method)
    }

    /// Reads everything until the server closes the connection (or the timeout).
    public func readToEnd() -> [UInt8] {
        var all = buffer
        buffer = []
        while let chunk = try? receive(), !chunk.isEmpty { all += chunk }
        return all
    }

    /// Reads one response (status line, headers, Content-Length, chunked or close-delimited body).
    public func readResponse(method: String = "GET") throws -> HTTPTestResponse {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = buffer.firstRange(of: separator)?.lowerBound
            if headerEnd == nil {
                let chunk = try receive()
                if chunk.isEmpty {
                    throw HTTPTestError.malformedResponse(
                        "closed before headers: \(String(decoding: buffer, as: UTF8.self))")
                }
                buffer += chunk
            }
        }
        let head = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw HTTPTestError.malformedResponse(head)
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) }
        let chunked = headers.contains {
            $0.name.lowercased() == "transfer-encoding" && $0.value.lowercased().contains("chunked")
        }
        var body: [UInt8]
        if method == "HEAD" || status == 204 || status == 304 {
            body = []
        } else if chunked {
            body = try readChunkedBody()
        } else if let length {
            while buffer.count < length {
                let chunk = try receive()
                if chunk.isEmpty { throw HTTPTestError.malformedResponse("body shorter than Content-Length") }
                buffer += chunk
            }
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            body = readToEnd()
        }
        return HTTPTestResponse(status: status, headers: headers, body: body)
    }

    /// A chunked body (a streamed answer), decoded: each chunk's size line and bytes, to the empty last chunk.
    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine()
            guard let size = Int(line.split(separator: ";")[0].trimmingCharacters(in: .whitespaces), radix: 16)
            else { throw HTTPTestError.malformedResponse("bad chunk size line: \(line)") }
            try fill(size + 2)
            if size == 0 {
                // The last chunk: no trailers are sent, so its CRLF ends the body.
                buffer.removeFirst(2)
                return body
            }
            body += buffer[..<size]
            buffer.removeFirst(size + 2)
        }
    }

    private func readLine() throws -> String {
        let end: [UInt8] = [13, 10]
        while buffer.firstRange(of: end) == nil {
            let chunk = try receive()
            if chunk.isEmpty { throw HTTPTestError.malformedResponse("closed inside a chunked body") }
            buffer += chunk
        }
        let range = buffer.firstRange(of: end)!
        let line = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
        buffer.removeFirst(range.upperBound)
        return line
    }

    private func fill(_ count: Int) throws {
        while buffer.count < count {
            let chunk = try receive()
            if chunk.isEmpty { throw HTTPTestError.malformedResponse("closed inside a chunked body") }
            buffer += chunk
        }
    }

    private func receive() throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { throw HTTPTestError.timedOut }
            return []
        }
        return Array(chunk[..<count])
    }
}
