import AuthJWT
import Foundation

/// Runs password hashing (slow on purpose) on its own threads, never on the Swift cooperative pool or the
/// database threads, so a burst of logins cannot starve quote reads.
///
/// At most `threads` hashes run at once; up to `queueLimit` more wait their turn (the contract asks that a
/// burst of 32 be served). Past that the server is overloaded: `QuoteVaultError.busy` (503 + Retry-After)
/// rather than an ever-growing queue.
///
/// Fair share: one client address (`RequestOrigin.clientAddress`) may hold at most `perAddressLimit` of the queue
/// (waiting and running), and waiting jobs are served one address at a time in turn, so a flood from one
/// address neither fills the queue nor delays the others by more than one hash per turn. The hashing threads
/// run at a lower scheduling priority than request handling (`niceness`, 10 by default), so a login burst slows
/// reads less.
public final class PasswordHashingQueue: @unchecked Sendable {
    // @unchecked: the queue state below is guarded by `condition` (not a `Mutex`: hashing threads wait on it).
    public let hasher: PasswordHasher
    public let queueLimit: Int
    public let perAddressLimit: Int
    private let condition = NSCondition()
    /// Waiting jobs by address, and the addresses with waiting jobs in the order they are to be served.
    private var waiting: [String: [@Sendable () -> Void]] = [:]
    private var turns: [String] = []
    private var waitingCount = 0
    /// Jobs waiting or running, by address.
    private var held: [String: Int] = [:]
    private var stopped = false
    /// Hashing threads not yet ended (they end after `stop()`, once the jobs already queued are done).
    private var runningThreads = 0

    /// - Parameter niceness: of the hashing threads: 0 is the process's own priority; higher gives the CPU to
    ///   request handling first (19 is the lowest).
    public init(
        hasher: PasswordHasher, threads: Int, queueLimit: Int, perAddressLimit: Int? = nil, niceness: Int32 = 10
    ) {
        self.hasher = hasher
        self.queueLimit = queueLimit
        // Half the queue, but at least the burst of 32 the contract asks to serve (which may come from one address).
        self.perAddressLimit = perAddressLimit ?? min(queueLimit, max(32, queueLimit / 2))
        runningThreads = max(1, threads)
        for index in 0..<max(1, threads) {
            let thread = Thread { [weak self] in
                // On Linux niceness is per thread: with who = 0, setpriority changes the calling thread only.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
                self?.work()
            }
            thread.name = "password-hashing-\(index)"
            thread.start()
        }
    }

    deinit { stop() }

    /// Operations waiting for a hashing thread (for metrics).
    public var queueDepth: Int { condition.withLock { waitingCount } }

    /// A new PHC hash of `password`.
    public func hash(_ password: String) async throws -> String {
        let hasher = self.hasher
        return try await run { try hasher.hash(password) }
    }

    /// Whether `password` matches `phc`; with no stored hash, hashes a dummy so that the answer takes as long.
    public func verify(_ password: String, against phc: String?) async throws -> Bool {
        let hasher = self.hasher
        return try await run {
            guard let phc else {
                hasher.hashDummy(password)
                return false
            }
            return (try? hasher.verify(password, against: phc)) ?? false
        }
    }

    /// Whether every hashing thread has ended (after `stop()`).
    public var hasEnded: Bool { condition.withLock { runningThreads == 0 } }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let address = RequestOrigin.clientAddress ?? ""
        return try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            defer { condition.unlock() }
            let heldByAddress = held[address, default: 0]
            guard !stopped, waitingCount < queueLimit, heldByAddress < perAddressLimit else {
                continuation.resume(throwing: QuoteVaultError.busy(retryAfterSeconds: 1))
                return
            }
            held[address] = heldByAddress + 1
            if waiting[address, default: []].isEmpty { turns.append(address) }
            waiting[address, default: []].append { continuation.resume(with: Result { try body() }) }
            waitingCount += 1
            condition.signal()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while turns.isEmpty && !stopped { condition.wait() }
            if stopped && turns.isEmpty {
                runningThreads -= 1
                condition.unlock()
                return
            }
            // The address whose turn it is gives one job, then goes to the back of the line if it has more.
            let address = turns.removeFirst()
            var jobs = waiting.removeValue(forKey: address) ?? []
            let job = jobs.removeFirst()
            if !jobs.isEmpty {
                waiting[address] = jobs
                turns.append(address)
            }
            waitingCount -= 1
            condition.unlock()
            job()
            condition.lock()
            let left = held[address, default: 1] - 1
            held[address] = left > 0 ? left : nil
            condition.unlock()
        }
    }
}
