import Foundation
import Synchronization

/// Closes connections answered before their request's body was read the way Apache and NGINX do: the answer is
/// sent and the write side shut, then what the client still sends is read and thrown away for a bounded while.
/// Closing a socket with unread input makes TCP send a reset instead of a FIN, and a client hit by the reset while
/// still sending may never read the answer (a `413` then looks like a dropped connection).
///
/// libmicrohttpd closes the socket itself; a copy of the descriptor (`dup`) keeps the connection open until a
/// thread of its own has drained it.
final class LingeringClose: Sendable {
    /// A socket is closed after this long, after this many bytes read, or when the client closes its side.
    static let time: Duration = .seconds(2)
    static let bytes = 256 * 1024
    /// Sockets lingering at once (each holds a file descriptor); past it, a connection closes at once.
    static let capacity = 64

    private struct Lingering {
        let socket: Int32
        let until: UInt64
        var read = 0
    }

    private let sockets = Mutex<[Lingering]>([])
    private let stopping = Atomic<Bool>(false)

    /// Sockets draining now (for tests).
    var count: Int { sockets.withLock { $0.count } }

    /// Takes a copy of `socket`, which MHD is about to close, and drains it.
    func adopt(_ socket: Int32) {
        let copy = dup(socket)
        guard copy >= 0 else { return }
        let (seconds, attoseconds) = Self.time.components
        let until =
            DispatchTime.now().uptimeNanoseconds + UInt64(seconds) * 1_000_000_000
            + UInt64(attoseconds / 1_000_000_000)
        let adopted = sockets.withLock { sockets in
            guard sockets.count < Self.capacity, !stopping.load(ordering: .relaxed) else { return false }
            sockets.append(Lingering(socket: copy, until: until))
            return true
        }
        if adopted { shutdown(copy, Int32(SHUT_WR)) } else { close(copy) }
    }

    /// Drains the sockets on a thread of its own until `stop()`, then closes those left.
    func start() {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while !stopping.load(ordering: .relaxed) {
                var polled = sockets.withLock { $0.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) } }
                guard !polled.isEmpty else {
                    Thread.sleep(forTimeInterval: 0.05)
                    continue
                }
                _ = poll(&polled, nfds_t(polled.count), 50)
                var read: [Int32: Int] = [:]
                var finished: Set<Int32> = []
                for entry in polled where entry.revents != 0 {
                    let count = buffer.withUnsafeMutableBytes {
                        recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    if count > 0 {
                        read[entry.fd] = count
                    } else if count == 0 || errno != EAGAIN && errno != EWOULDBLOCK {
                        finished.insert(entry.fd)
                    }
                }
                let now = DispatchTime.now().uptimeNanoseconds
                let done = sockets.withLock { sockets -> [Int32] in
                    var done: [Int32] = []
                    sockets.removeAll { lingering in
                        let total = lingering.read + read[lingering.socket, default: 0]
                        guard finished.contains(lingering.socket) || total > Self.bytes || now >= lingering.until
                        else { return false }
                        done.append(lingering.socket)
                        return true
                    }
                    for index in sockets.indices { sockets[index].read += read[sockets[index].socket, default: 0] }
                    return done
                }
                for socket in done { close(socket) }
            }
            for lingering in sockets.withLock({ sockets in
                defer { sockets = [] }; return sockets
            }) {
                close(lingering.socket)
            }
        }
        thread.name = "http-linger"
        thread.start()
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
    }
}
