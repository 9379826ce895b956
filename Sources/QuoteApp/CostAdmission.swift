import HTTPServer
import PGClient
import QuoteAPI
import QuoteVault

/// Admission by a route's cost class (`Route.cost`): expensive requests run under a global cap that leaves
/// database connections to every other class, a per-address cap and a shorter statement timeout; over a cap they
/// are refused (past the global cap after a short wait that holds no connection) (`429` past the address's, `503`
/// past the global one, both with `Retry-After`, sent after the refusal delay). The other classes pass straight
/// through (the hashing queue and the throttles bound `auth`).
struct CostAdmission: Sendable {
    /// Nil when throttling is off (`RATE_LIMITS=off`).
    let expensive: ConcurrencyGate?
    let expensiveTimeout: Duration?

    init(_ configuration: AppConfiguration) {
        expensive =
            configuration.rateLimitsEnabled
            ? ConcurrencyGate(
                perAddress: configuration.expensivePerAddress, global: configuration.expensiveConcurrencyInEffect)
            : nil
        let milliseconds = configuration.expensiveStatementTimeoutMilliseconds
        expensiveTimeout = milliseconds > 0 ? .milliseconds(milliseconds) : nil
    }

    /// How long an expensive request past the global cap waits for a place before it is refused (see
    /// `ConcurrencyGate.enter(_:waitingUpTo:)`).
    static let globalWait: Duration = .milliseconds(250)

    func run(
        _ route: Route, _ request: Request, _ body: @escaping @Sendable () async throws -> Response
    ) async throws -> Response {
        guard route.cost.of(request) == .expensive else { return try await body() }
        let address = request.clientAddress
        let timeout = expensiveTimeout
        let work = { @Sendable in try await PGPool.$statementTimeoutOverride.withValue(timeout) { try await body() } }
        guard let expensive else { return try await work() }
        if let refusal = await expensive.enter(address, waitingUpTo: Self.globalWait) {
            // Sent after the refusal delay like every refusal past a bound: a client looping on it pays with time,
            // not the server with CPU (the wait holds no thread and no database connection).
            var response = route.policy.dialect.render(refusal, thrown: refusal, for: request)
            response.isRefusalPastABound = true
            return response
        }
        defer { expensive.leave(address) }
        return try await work()
    }
}
