import Foundation

/// Hands an import's batches out to its connections and keeps the file's order where the result depends on it:
/// a batch inserts its rows only once the batch before it has inserted its own (of two rows the unique index
/// holds equal, the earlier in the file is kept, as on one connection), and commits only once the batch before
/// it has committed and been reported (the committed batches are always a prefix of the file: the resume point
/// stays one number). Everything else a batch does (COPY, counting its words) runs side by side.
///
/// The waits block a pool worker thread inside the batch's transaction, hence a condition variable; every batch
/// ends by marking its progress or by `stop()`, which releases every waiter. Unchecked `Sendable`: every stored
/// `var` is read and written only with `condition` locked.
final class ImportBatchOrder: @unchecked Sendable {
    /// Thrown to a batch that waited for one that failed or was stopped: it rolls back.
    struct Stopped: Error {}

    private let condition = NSCondition()
    private let count: Int
    private var next = 0
    private var inserted = -1
    private var committed = -1
    private var stopped = false

    init(batches count: Int) { self.count = count }

    /// The next batch to send, or nil when all are handed out or the import stopped.
    func take() -> Int? {
        condition.withLock {
            guard !stopped, next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    func waitUntilInserted(_ batch: Int) throws { try wait { $0.inserted >= batch } }
    func waitUntilCommitted(_ batch: Int) throws { try wait { $0.committed >= batch } }
    func markInserted(_ batch: Int) { update { $0.inserted = max($0.inserted, batch) } }
    func markCommitted(_ batch: Int) { update { $0.committed = max($0.committed, batch) } }
    func stop() { update { $0.stopped = true } }

    private func wait(until done: (ImportBatchOrder) -> Bool) throws {
        condition.lock()
        defer { condition.unlock() }
        while !done(self) && !stopped { condition.wait() }
        if !done(self) { throw Stopped() }
    }

    private func update(_ change: (ImportBatchOrder) -> Void) {
        condition.lock()
        change(self)
        condition.broadcast()
        condition.unlock()
    }
}
