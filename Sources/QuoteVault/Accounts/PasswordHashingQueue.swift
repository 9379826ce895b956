import AuthJWT
import Foundation

/// Runs password hashing (slow on purpose) on its own threads, never on the Swift cooperative pool or the
/// database threads, so a burst of logins cannot starve quote reads.
///
/// At most `threads` hashes run at once; up to `queueLimit` more wait their turn (the contract asks that a
/// burst of 32 be served). Past that the server is overloaded: `QuoteVaultError.busy` (503 + Retry-After)
/// rather than an ever-growing queue.
public final class PasswordHashingQueue: @unchecked Sendable {
    // @unchecked: `jobs` and `running` are guarded by `condition`.
    public let hasher: PasswordHasher
    public let queueLimit: Int
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopped = false

    public init(hasher: PasswordHasher, threads: Int, queueLimit: Int) {
        self.hasher = hasher
        self.queueLimit = queueLimit
        for index in 0..<max(1, threads) {
            let thread = Thread { [weak self] in self?.work() }
            thread.name = "password-hashing-\(index)"
            thread.start()
        }
    }

    deinit { stop() }

    /// Operations waiting for a hashing thread (for metrics).
    public var queueDepth: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count
    }

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

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            defer { condition.unlock() }
            guard !stopped, jobs.count < queueLimit else {
                continuation.resume(throwing: QuoteVaultError.busy(retryAfterSeconds: 1))
                return
            }
            jobs.append { continuation.resume(with: Result { try body() }) }
            condition.signal()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if stopped && jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
