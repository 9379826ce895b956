import Foundation
import Synchronization

/// A minimal SMTP server on 127.0.0.1 that keeps every message it receives: enough protocol for libcurl
/// (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT). Tests read reset tokens from it, as a user would
/// from their inbox.
public final class SMTPSink: Sendable {
    public let port: Int
    private let listener: Int32
    private let messages = Mutex<[String]>([])
    private let running = Mutex(true)

    public init(port requested: Int = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(requested).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw HTTPTestError.connectFailed(errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// `smtp://127.0.0.1:PORT`.
    public var url: String { "smtp://127.0.0.1:\(port)" }

    /// Everything received so far (headers and body of each message).
    public var received: [String] { messages.withLock { $0 } }

    /// Stops listening (the port is closed: senders see connection refused).
    public func stop() {
        running.withLock { $0 = false }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Waits until at least `count` messages arrived (at most `timeout`).
    public func waitForMessages(_ count: Int, timeout: Duration = .seconds(15)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = received
            if current.count >= count { return current }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HTTPTestError.timedOut
    }

    private func acceptLoop() {
        while running.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer: [UInt8] = []
        func reply(_ line: String) {
            _ = Array((line + "\r\n").utf8).withUnsafeBytes {
                send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
        }
        func readLine() -> String? {
            while true {
                if let end = buffer.firstRange(of: Array("\r\n".utf8)) {
                    let line = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                    buffer.removeFirst(end.upperBound)
                    return line
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return nil }
                buffer += chunk[..<count]
            }
        }
        reply("220 sink ESMTP")
        while let line = readLine() {
            let command = line.prefix(4).uppercased()
            switch command {
            case "EHLO": reply("250-sink"); reply("250 8BITMIME")
            case "HELO", "MAIL", "RCPT", "RSET", "NOOP": reply("250 OK")
            case "DATA":
                reply("354 End data with <CR><LF>.<CR><LF>")
                var lines: [String] = []
                while let dataLine = readLine(), dataLine != "." {
                    lines.append(dataLine.hasPrefix("..") ? String(dataLine.dropFirst()) : dataLine)
                }
                messages.withLock { $0.append(lines.joined(separator: "\n")) }
                reply("250 OK queued")
            case "QUIT": reply("221 Bye"); return
            default: reply("502 Command not implemented")
            }
        }
    }
}

extension SMTPSink {
    /// The token from a mail's `…?token=<token>` link.
    public static func token(in mail: String) -> String? {
        guard let range = mail.range(of: #"\?token=[A-Za-z0-9_-]+"#, options: .regularExpression) else { return nil }
        return String(mail[range].dropFirst(7))
    }
}
