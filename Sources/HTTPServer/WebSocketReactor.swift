internal import CMicroHTTPD
import Foundation
import Synchronization

/// The one thread that reads every upgraded socket (epoll): it frames what arrives, answers pings and closes, and
/// hands whole messages to each connection's handler. Idle sockets cost one epoll entry and no thread.
final class WebSocketReactor: Sendable {
    /// What the reactor alone touches of a connection: the framing state of what it has read so far.
    private final class Reader: @unchecked Sendable {
        // @unchecked: used only on the reactor's thread (entries are added under `entries`' lock, then only read
        // there).
        let connection: WebSocketConnection
        let handler: any WebSocketHandler
        var decoder: WebSocketFrameDecoder
        var message: (opcode: WebSocketOpcode, bytes: [UInt8])?
        var lastHeard = ContinuousClock.now

        init(connection: WebSocketConnection, handler: any WebSocketHandler) {
            self.connection = connection
            self.handler = handler
            // A frame is at most a message.
            self.decoder = WebSocketFrameDecoder(maxFramePayload: connection.settings.maxMessageBytes)
        }
    }

    private let epoll: Int32
    private let entries = Mutex<[Int32: Reader]>([:])
    /// When each connection must be looked at again: its idle deadline (from when it was last heard, as of when
    /// the entry was added), its close deadline, or at once when it was cut. A heartbeat touches nothing here; an
    /// entry that falls due is checked and put back at the connection's current deadline (`check`).
    private let deadlines = Mutex(DeadlineQueue<ContinuousClock.Instant, WebSocketConnection>())
    private let stopping = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    init() {
        epoll = cmhd_epoll_create()
    }

    deinit { close(epoll) }

    /// Upgraded connections open now.
    var count: Int { entries.withLock { $0.count } }

    func start() {
        running.store(true, ordering: .relaxed)
        let thread = Thread { [self] in
            run()
            running.store(false, ordering: .relaxed)
        }
        thread.name = "websockets"
        thread.start()
    }

    /// Sends every connection a close frame (1001), gives them a moment, then releases what is left and ends the
    /// thread. Must run before libmicrohttpd stops (it owns the sockets).
    func stop() async {
        let open = entries.withLock { Array($0.values) }
        for reader in open { reader.connection.close(.goingAway, reason: "server shutting down", end: .shutdown) }
        if !open.isEmpty { try? await Task.sleep(for: .milliseconds(100)) }
        stopping.store(true, ordering: .relaxed)
        while running.load(ordering: .relaxed) { try? await Task.sleep(for: .milliseconds(20)) }
        for reader in entries.withLock({ Array($0.values) }) { release(reader) }
    }

    /// Takes over an upgraded socket: `initial` is what the client sent after its request, already read.
    func adopt(_ connection: WebSocketConnection, handler: any WebSocketHandler, initial: [UInt8]) {
        let reader = Reader(connection: connection, handler: handler)
        let socket = connection.withState { $0.socket }
        let flags = fcntl(socket, F_GETFL)
        _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK)
        // The kernel's send buffer no larger than the connection's own limit: a client that stops reading fills
        // both soon, instead of the kernel holding megabytes for it.
        var size = Int32(connection.settings.outgoingBufferLimit)
        setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        entries.withLock { $0[socket] = reader }
        if cmhd_epoll_add(epoll, socket) != 0 {
            release(reader)
            return
        }
        // Looked at once now: that puts it at its idle deadline (or its close deadline, if its handler closed it
        // already).
        recheck(connection, at: .now)
        if !initial.isEmpty { initial.withUnsafeBytes { consume($0, reader) } }
    }

    /// Watches `socket` for room to write too (something is pending), or again only for reading.
    func watch(_ socket: Int32, writes: Bool) {
        _ = cmhd_epoll_watch(epoll, socket, writes ? 1 : 0)
    }

    /// Looks at `connection` again at `deadline` (its close deadline, or now when it was cut); from any thread.
    func recheck(_ connection: WebSocketConnection, at deadline: ContinuousClock.Instant) {
        deadlines.withLock { $0.add(connection, at: deadline) }
    }

    private func run() {
        var sockets = [Int32](repeating: 0, count: 64)
        var readable = [Int32](repeating: 0, count: 64)
        var writable = [Int32](repeating: 0, count: 64)
        while !stopping.load(ordering: .relaxed) {
            let ready = cmhd_epoll_wait(epoll, &sockets, &readable, &writable, 64, 250)
            for index in 0..<Int(max(0, ready)) {
                guard let reader = entries.withLock({ $0[sockets[index]] }) else { continue }
                if writable[index] != 0 { reader.connection.withState { reader.connection.flush(&$0) } }
                if readable[index] != 0 { read(reader) }
            }
            let now = ContinuousClock.now
            for connection in deadlines.withLock({ $0.removeDue(through: now) }) { check(connection, now: now) }
        }
    }

    /// Reads what the socket has (a bounded number of reads per wake-up, so that one client cannot starve the
    /// others: epoll wakes the thread again for the rest).
    private func read(_ reader: Reader) {
        let socket = reader.connection.withState { $0.phase == .released ? -1 : $0.socket }
        guard socket >= 0 else { return }
        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 8) { buffer in
            for _ in 0..<4 {
                let count = recv(socket, buffer.baseAddress, buffer.count, 0)
                if count > 0 {
                    reader.lastHeard = .now
                    consume(UnsafeRawBufferPointer(rebasing: buffer[..<count]), reader)
                    if count < buffer.count { return }
                    continue
                }
                if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
                release(reader)
                return
            }
        }
    }

    private func consume(_ bytes: UnsafeRawBufferPointer, _ reader: Reader) {
        let connection = reader.connection
        reader.decoder.append(bytes)
        while true {
            let frame: WebSocketFrame
            do {
                guard let next = try reader.decoder.next() else { return }
                frame = next
            } catch {
                switch error {
                case .tooBig: return fail(reader, .messageTooBig, "frame too big")
                case .protocolError(let reason): return fail(reader, .protocolError, reason)
                }
            }
            let phase = connection.withState { $0.phase }
            switch frame.opcode {
            case .close:
                // The client's close: answered (once) with its code, then the socket is released.
                if phase == .open {
                    let code =
                        frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : 1000
                    connection.close(WebSocketCloseCode(rawValue: code) ?? .normal)
                }
                connection.withState { connection.flush(&$0) }
                return release(reader)
            case .ping:
                connection.pong(frame.payload)
            case .pong:
                continue
            case .text, .binary, .continuation:
                guard phase == .open else { continue }
                guard receive(frame, reader) else { return }
            }
        }
    }

    /// Adds a data frame to the message being assembled; a whole one goes to the handler. False once the
    /// connection failed.
    private func receive(_ frame: WebSocketFrame, _ reader: Reader) -> Bool {
        if frame.opcode == .continuation {
            guard reader.message != nil else {
                return failing(reader, .protocolError, "continuation without a message")
            }
        } else {
            guard reader.message == nil else {
                return failing(reader, .protocolError, "new message inside a fragmented one")
            }
            reader.message = (frame.opcode, [])
        }
        guard let message = reader.message,
            message.bytes.count + frame.payload.count <= reader.connection.settings.maxMessageBytes
        else { return failing(reader, .messageTooBig, "message too big") }
        reader.message?.bytes += frame.payload
        guard frame.fin, let whole = reader.message else { return true }
        reader.message = nil
        if whole.opcode == .text {
            guard let text = String(validating: whole.bytes, as: UTF8.self) else {
                return failing(reader, .invalidPayload, "text is not UTF-8")
            }
            reader.handler.received(text: text, on: reader.connection)
        } else {
            reader.handler.received(binary: whole.bytes, on: reader.connection)
        }
        return true
    }

    private func failing(_ reader: Reader, _ code: WebSocketCloseCode, _ reason: String) -> Bool {
        fail(reader, code, reason)
        return false
    }

    /// A protocol failure: the close frame says why; nothing more is read from the client but its close.
    private func fail(_ reader: Reader, _ code: WebSocketCloseCode, _ reason: String) {
        reader.message = nil
        reader.decoder = WebSocketFrameDecoder(maxFramePayload: 125)
        reader.connection.close(code, reason: reason)
        // Unread bytes of a bad frame would be misread as frames: the socket is released once the close frame
        // has gone (or at the close deadline).
        reader.connection.withState { state in
            if state.pending.isEmpty { shutdown(state.socket, Int32(SHUT_RD)) }
        }
    }

    /// A connection whose deadline came: an idle one is closed, a closing one past its close deadline and a cut one
    /// are released; one heard from since is put back at its new idle deadline.
    private func check(_ connection: WebSocketConnection, now: ContinuousClock.Instant) {
        let (socket, phase, closeDeadline) = connection.withState { ($0.socket, $0.phase, $0.closeDeadline) }
        // Released already (its descriptor may belong to another connection now).
        guard phase != .released, let reader = entries.withLock({ $0[socket] }), reader.connection === connection
        else { return }
        switch phase {
        case .cut:
            release(reader)
        case .closing:
            guard let closeDeadline, now < closeDeadline else { return release(reader) }
            recheck(connection, at: closeDeadline)
        case .open:
            let idleDeadline = reader.lastHeard + connection.settings.idleTimeout
            if now >= idleDeadline {
                connection.close(.goingAway, reason: "idle", end: .idle)
            } else {
                recheck(connection, at: idleDeadline)
            }
        case .released:
            break
        }
    }

    /// Gives the socket back to libmicrohttpd (which closes it) and tells the handler; once.
    private func release(_ reader: Reader) {
        let released = reader.connection.withState { state -> (Int32, UpgradeHandle)? in
            guard state.phase != .released, let upgrade = state.upgrade else { return nil }
            state.phase = .released
            state.pending = []
            state.upgrade = nil
            return (state.socket, upgrade)
        }
        guard let (socket, upgrade) = released else { return }
        _ = cmhd_epoll_remove(epoll, socket)
        // The handler hears of it before the socket stops counting as open: no count of open sockets is ever lower
        // than the closes its handlers have seen.
        reader.handler.closed(reader.connection)
        entries.withLock { _ = $0.removeValue(forKey: socket) }
        upgrade.close()
    }
}
