import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `quote-server healthcheck`: asks the running server's `GET /health` on HOST/PORT and exits 0 when it answers
/// 200, 1 otherwise. The container image's HEALTHCHECK runs it: the slim image has no curl, and its /bin/sh (dash)
/// has no /dev/tcp. A wildcard HOST (0.0.0.0) is asked on 127.0.0.1. Starts no database.
struct HealthCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck", abstract: "Exit 0 if the server on HOST/PORT answers GET /health with 200, else 1.")

    @OptionGroup var options: ServerOptions
    @Option(help: "Seconds to wait for the whole exchange (default 3).")
    var timeout: Double = 3

    func validate() throws {
        guard timeout > 0, timeout <= 60 else { throw ValidationError("--timeout must be within (0, 60] seconds") }
    }

    func run() throws {
        let configuredHost = options.value(options.host, "HOST") ?? "127.0.0.1"
        let host = configuredHost == "0.0.0.0" ? "127.0.0.1" : configuredHost
        let port = try options.intValue(options.port, "PORT", default: 8080, within: 1...65535)
        switch HealthProbe(host: host, port: UInt16(port), timeout: timeout).statusLine() {
        case .success(let line) where line.split(separator: " ").dropFirst().first == "200":
            return
        case .success(let line):
            print("unhealthy: \(host):\(port) answered \(line)")
        case .failure(let problem):
            print("unhealthy: \(host):\(port): \(problem.reason)")
        }
        throw ExitCode(1)
    }
}

/// One `GET /health HTTP/1.0` over IPv4 with a deadline on the connect, the write and the read.
struct HealthProbe {
    struct Problem: Error { let reason: String }

    let host: String
    let port: UInt16
    let timeout: Double

    /// The answer's status line, e.g. `HTTP/1.1 200 OK`.
    func statusLine() -> Result<String, Problem> {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            return .failure(Problem(reason: "HOST is not an IPv4 address"))
        }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return .failure(Problem(reason: "no socket: errno \(errno)")) }
        defer { close(socket) }
        let deadline = Date().addingTimeInterval(timeout)
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected != 0 {
            guard errno == EINPROGRESS else { return .failure(Problem(reason: String(cString: strerror(errno)))) }
            guard wait(socket, for: Int16(POLLOUT), until: deadline) else {
                return .failure(Problem(reason: "connect timed out"))
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else { return .failure(Problem(reason: String(cString: strerror(error)))) }
        }
        let request = Array("GET /health HTTP/1.0\r\nHost: \(host)\r\n\r\n".utf8)
        var sent = 0
        while sent < request.count {
            guard wait(socket, for: Int16(POLLOUT), until: deadline) else {
                return .failure(Problem(reason: "write timed out"))
            }
            let count = request[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return .failure(Problem(reason: "write failed")) }
            sent += count
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while !answer.contains(UInt8(ascii: "\n")), answer.count < 4096 {
            guard wait(socket, for: Int16(POLLIN), until: deadline) else {
                return .failure(Problem(reason: "read timed out"))
            }
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        guard let end = answer.firstIndex(of: UInt8(ascii: "\n")) else {
            return .failure(Problem(reason: "no HTTP status line"))
        }
        let line = String(decoding: answer[..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return .success(line)
    }

    /// Whether `socket` became ready for `events` before `deadline`.
    private func wait(_ socket: Int32, for events: Int16, until deadline: Date) -> Bool {
        while true {
            let remaining = Int32(deadline.timeIntervalSinceNow * 1000)
            guard remaining > 0 else { return false }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, remaining)
            if ready > 0 { return true }
            if ready < 0, errno == EINTR { continue }
            return false
        }
    }
}
