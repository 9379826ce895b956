import Logging
import PGClient
import Synchronization

/// Sends this instance's messages to the other instances (`pg_notify` on `realtime_changes`) in the order they
/// were made: what is waiting goes in one statement, whose notifications PostgreSQL delivers in order, and the
/// next statement waits for it. A track followed by an untrack therefore never arrives the other way round.
///
/// When a send fails (the database is away), its messages are lost; the first send that succeeds afterwards calls
/// `onRecovered`, for the hub to say `bye` and announce everything again, so that the others drop what they
/// missed the end of.
final class RealtimeAnnouncer: Sendable {
    private struct Queue {
        var waiting: [String] = []
        var lost = false
    }

    /// Messages waiting past this are dropped (and counted lost): the database has been away for long.
    static let waitingLimit = 100_000
    /// Messages in one statement (a hello's answer can be long).
    static let batchLimit = 500

    private let queue = Mutex(Queue())
    private let wakeUp: AsyncStream<Void>.Continuation
    private let pool: PGPool
    private let channel: String
    private let logger: Logger
    private let onRecovered: @Sendable () -> Void

    init(pool: PGPool, channel: String, logger: Logger, onRecovered: @escaping @Sendable () -> Void) {
        let (signals, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wakeUp = wakeUp
        self.pool = pool
        self.channel = channel
        self.logger = logger
        self.onRecovered = onRecovered
        Task { [weak self] in
            for await _ in signals {
                guard let self else { return }
                await self.sendWaiting()
            }
        }
    }

    private func sendWaiting() async {
        while true {
            let batch = queue.withLock { queue -> [String] in
                let batch = Array(queue.waiting.prefix(Self.batchLimit))
                queue.waiting.removeFirst(batch.count)
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                _ = try await pool.query(
                    "SELECT count(pg_notify(\(channel), message)) FROM unnest(\(batch)::text[]) AS message")
                let recovered = queue.withLock { queue in
                    defer { queue.lost = false }
                    return queue.lost
                }
                if recovered { onRecovered() }
            } catch {
                queue.withLock { $0.lost = true }
                logger.warning("realtime: messages to the other instances were lost", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Queues `message` (a RealtimePeerMessage's payload, at most 8,000 bytes) after those before it.
    func send(_ message: String) {
        queue.withLock { queue in
            if queue.waiting.count < Self.waitingLimit {
                queue.waiting.append(message)
            } else {
                queue.lost = true
            }
        }
        wakeUp.yield()
    }

    /// Sends what is waiting, then ends.
    func finish() { wakeUp.finish() }
}
