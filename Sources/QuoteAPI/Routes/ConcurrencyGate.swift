import QuoteVault
import Synchronization

/// At most `perAddress` requests of one kind running at once for one client address: a search holds a database
/// connection for its whole run, so one address looping on costly patterns must not take the pool from everyone
/// (the statement timeout bounds each one; this bounds how many). Past it: `429` with `Retry-After`.
final class ConcurrencyGate: Sendable {
    private let perAddress: Int
    private let running = Mutex<[String: Int]>([:])

    init(perAddress: Int) { self.perAddress = perAddress }

    func run<T: Sendable>(for address: String, _ body: () async throws -> T) async throws -> T {
        let admitted = running.withLock { running -> Bool in
            let now = running[address, default: 0]
            guard now < perAddress else { return false }
            running[address] = now + 1
            return true
        }
        guard admitted else { throw QuoteVaultError.rateLimited(retryAfterSeconds: 1) }
        defer {
            running.withLock { running in
                let left = running[address, default: 1] - 1
                running[address] = left > 0 ? left : nil
            }
        }
        return try await body()
    }
}
