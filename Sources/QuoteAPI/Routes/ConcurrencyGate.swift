import QuoteVault
import Synchronization

/// At most `perAddress` requests of one kind running at once for one client address, and at most `global` for
/// everyone: expensive work holds a database connection for its whole run, so neither one address nor a few
/// together may take the pool (the statement timeout bounds each run; this bounds how many). Past the address's cap
/// `429` at once; past the global one a request may wait a moment for a place (`enter(_:waitingUpTo:)`), holding
/// no database connection and no thread, then `503`; both with `Retry-After`.
final class ConcurrencyGate: Sendable {
    private let perAddress: Int
    private let global: Int
    private let running = Mutex<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(perAddress: Int, global: Int = .max) {
        self.perAddress = perAddress
        self.global = global
    }

    /// Takes a place for `address`; nil when admitted (give it back with `leave`), else the refusal.
    func enter(_ address: String) -> QuoteVaultError? {
        running.withLock { running -> QuoteVaultError? in
            let now = running.byAddress[address, default: 0]
            guard now < perAddress else { return .rateLimited(retryAfterSeconds: 1) }
            guard running.total < global else { return .busy(retryAfterSeconds: 1) }
            running.byAddress[address] = now + 1
            running.total += 1
            return nil
        }
    }

    /// How often a request waiting for a place past the global cap looks again.
    static let pollInterval: Duration = .milliseconds(5)

    /// `enter`, but past the global cap it looks again until `wait` has passed: expensive requests are short, so
    /// clients who ask at the same instant are served in turn instead of refused. The per-address cap still
    /// refuses at once, so one address cannot queue more than its own share.
    func enter(_ address: String, waitingUpTo wait: Duration) async -> QuoteVaultError? {
        let deadline = ContinuousClock.now + wait
        while true {
            let refusal = enter(address)
            guard case .busy = refusal, ContinuousClock.now < deadline else { return refusal }
            try? await Task.sleep(for: Self.pollInterval)
        }
    }

    func leave(_ address: String) {
        running.withLock { running in
            let left = running.byAddress[address, default: 1] - 1
            running.byAddress[address] = left > 0 ? left : nil
            running.total -= 1
        }
    }

    func run<T: Sendable>(for address: String, _ body: () async throws -> T) async throws -> T {
        if let refusal = enter(address) { throw refusal }
        defer { leave(address) }
        return try await body()
    }
}
