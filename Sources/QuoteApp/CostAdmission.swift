import HTTPServer
import PGClient
import QuoteAPI
import QuoteVault

/// Admission by cost: the route's cost class is the first guess, the client's measured database time corrects it
/// (`FairShare`). Expensive requests run under a global cap that leaves database connections to every other class, a
/// per-address cap and a shorter statement timeout; over a cap they are refused (past the global cap after a short
/// wait that holds no connection, places going to the fairest waiter) (`429` past the address's or the client's
/// budget, `503` past the global cap, all with `Retry-After`, sent after the refusal delay). The other classes pass
/// straight through (the hashing queue and the throttles bound `auth`). Every request's database time is charged to
/// its client, which the pools also serve fairly (`PGPool.chargedClient`).
struct CostAdmission: Sendable {
    /// Nil when throttling is off (`RATE_LIMITS=off`): then nothing is charged, and the pools serve in turn.
    let expensive: ConcurrencyGate?
    let fairShare: FairShare?
    let expensiveTimeout: Duration?

    init(_ configuration: AppConfiguration, ledger: DatabaseTimeLedger) {
        let limits = configuration.rateLimitsEnabled
        expensive =
            limits
            ? ConcurrencyGate(
                perAddress: configuration.expensivePerAddress, global: configuration.expensiveConcurrencyInEffect)
            : nil
        fairShare =
            limits
            ? FairShare(
                ledger: ledger, share: Double(configuration.databaseClientShareMilliseconds) / 1000,
                budget: Double(configuration.databaseClientBudgetMilliseconds) / 1000)
            : nil
        let milliseconds = configuration.expensiveStatementTimeoutMilliseconds
        expensiveTimeout = milliseconds > 0 ? .milliseconds(milliseconds) : nil
    }

    /// How long an expensive request past the global cap waits for a place before it is refused (see
    /// `ConcurrencyGate.enter(_:use:waitingUpTo:)`).
    static let globalWait: Duration = .seconds(1)

    /// The stage. On the event thread (`Handler.immediate`) it passes only what it would pass at once without a
    /// statement timeout: a request that is not expensive from a client within its share; any other takes the async
    /// path, where it is admitted (or refused) as every request is.
    var stage: Stage {
        Stage(
            "cost_admission",
            immediate: { request, route, next in
                var cost = route.cost.of(request)
                if let fairShare, fairShare.verdict(for: FairShare.client(of: request)) != .withinShare {
                    cost = .expensive
                }
                return cost == .expensive ? nil : try next(request)
            },
            run: { request, route, next in try await run(route, request) { try await next(request) } })
    }

    func run(
        _ route: Route, _ request: Request, _ body: @escaping @Sendable () async throws -> Response
    ) async throws -> Response {
        guard let fairShare, let expensive else { return try await runExpensiveIf(route.cost.of(request), body) }
        // The server runs the request with its database time charged to this client (`FairShare.chargingTheClient`).
        let client = FairShare.client(of: request)
        var cost = route.cost.of(request)
        switch fairShare.verdict(for: client) {
        case .withinShare: break
        case .overShare: cost = .expensive
        case .overBudget(let seconds): return refusal(.rateLimited(retryAfterSeconds: seconds), route, request)
        }
        guard cost == .expensive else { return try await body() }
        let address = request.clientAddress
        let use = fairShare.recentUse(of: client)
        if let refusal = await expensive.enter(address, use: use, waitingUpTo: Self.globalWait) {
            return self.refusal(refusal, route, request)
        }
        defer { expensive.leave(address) }
        return try await runExpensiveIf(.expensive, body)
    }

    /// `body`, under the expensive statement timeout when `cost` is expensive.
    private func runExpensiveIf(
        _ cost: CostClass, _ body: @escaping @Sendable () async throws -> Response
    ) async throws -> Response {
        guard cost == .expensive else { return try await body() }
        return try await PGPool.$statementTimeoutOverride.withValue(expensiveTimeout) { try await body() }
    }

    /// Sent after the refusal delay like every refusal past a bound: a client looping on it pays with time, not the
    /// server with CPU (the wait holds no thread and no database connection).
    private func refusal(_ error: QuoteVaultError, _ route: Route, _ request: Request) -> Response {
        var response = route.policy.dialect.render(error, thrown: error, for: request)
        response.isRefusalPastABound = true
        return response
    }
}
