#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibPQ
import Foundation
import Logging
import Synchronization

/// One dedicated connection (not a pool's) that `LISTEN`s on a channel and hands each notification's payload to
/// `onNotification`, on a thread of its own.
///
/// After the connection fails it reconnects with growing pauses; once listening again it calls `onReconnect`,
/// since notifications sent while it was away are lost and whoever relies on them must look again.
public final class PGListener: Sendable {
    private let connectionString: String
    private let channel: String
    private let logger: Logger
    private let onNotification: @Sendable (String) -> Void
    private let onReconnect: @Sendable () -> Void
    private let onLost: @Sendable () -> Void
    private let onListening: @Sendable () -> Void
    private let stopping = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    /// The listening backend's process id (0 while disconnected), for operators and tests.
    private let backend = Atomic<Int32>(0)
    /// How many times it has started listening (the first time included).
    private let sessions = Atomic<Int>(0)

    /// - Parameters:
    ///   - channel: a plain identifier (letters, digits, underscores), sent as is in `LISTEN`.
    ///   - onLost: called when a listening connection fails (notifications are being missed from then on).
    ///   - onListening: called each time it starts listening, the first time included.
    public init(
        connectionString: String, channel: String, logger: Logger,
        onNotification: @escaping @Sendable (String) -> Void, onReconnect: @escaping @Sendable () -> Void,
        onLost: @escaping @Sendable () -> Void = {}, onListening: @escaping @Sendable () -> Void = {}
    ) {
        precondition(
            !channel.isEmpty && channel.utf8.allSatisfy { $0 == UInt8(ascii: "_") || isalnum(Int32($0)) != 0 },
            "channel must be a plain identifier")
        self.connectionString = connectionString
        self.channel = channel
        self.logger = logger
        self.onNotification = onNotification
        self.onReconnect = onReconnect
        self.onLost = onLost
        self.onListening = onListening
    }

    public var backendPID: Int32 { backend.load(ordering: .relaxed) }
    public var listeningSessions: Int { sessions.load(ordering: .relaxed) }
    /// False once the thread has returned after `stop()`.
    public var isRunning: Bool { running.load(ordering: .relaxed) }

    public func start() {
        running.store(true, ordering: .relaxed)
        let thread = Thread { [self] in
            run()
            running.store(false, ordering: .relaxed)
        }
        thread.name = "pg-listen"
        thread.start()
    }

    /// Asks the thread to end; it notices within a quarter of a second.
    public func stop() { stopping.store(true, ordering: .relaxed) }

    private func run() {
        var pause = 0.1
        while !stopping.load(ordering: .relaxed) {
            do {
                let connection = try PGConnection(connectionString: connectionString, logger: logger)
                try connection.execute(unsafeSQL: "LISTEN \(channel)")
                backend.store(PQbackendPID(connection.handle), ordering: .relaxed)
                let reconnected = sessions.wrappingAdd(1, ordering: .relaxed).oldValue > 0
                pause = 0.1
                onListening()
                if reconnected {
                    logger.notice("listening again for notifications", metadata: ["channel": .string(channel)])
                    onReconnect()
                }
                try listen(on: connection)
            } catch {
                let wasListening = backend.exchange(0, ordering: .relaxed) != 0
                guard !stopping.load(ordering: .relaxed) else { return }
                if wasListening { onLost() }
                logger.warning(
                    "notification listener lost its connection; reconnecting",
                    metadata: ["channel": .string(channel), "error": .string(String(describing: error))])
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 5)
            }
        }
    }

    /// Waits on the socket and delivers notifications until `stop()` or a failure (thrown).
    private func listen(on connection: PGConnection) throws {
        let socket = PQsocket(connection.handle)
        while !stopping.load(ordering: .relaxed) {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 250)
            if ready < 0 && errno != EINTR { throw PGError(kind: .connection, message: "poll failed") }
            guard ready > 0 else { continue }
            guard PQconsumeInput(connection.handle) == 1, !connection.isBroken else {
                throw PGError(kind: .connection, message: connection.lastErrorMessage)
            }
            while let notification = PQnotifies(connection.handle) {
                let payload = String(cString: notification.pointee.extra)
                PQfreemem(notification)
                onNotification(payload)
            }
        }
    }
}
