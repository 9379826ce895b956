import Foundation
import HTTPServer
import PGClient

/// Measured cost corrects a route's first guess: every request's database time is charged to its client
/// (`DatabaseTimeLedger`, through `PGPool.chargedClient`), and while connections were short recently a client whose
/// recent database time is over its share is treated as expensive whatever its route (the expensive class's cap and
/// statement timeout), and past its budget refused with `429` until enough of it has decayed. When connections are not
/// short nobody waits for them, and nobody is held back.
struct FairShare: Sendable {
    let ledger: DatabaseTimeLedger
    /// Seconds of database time within the ledger's window (`DB_CLIENT_SHARE`).
    let share: Double
    /// Seconds of database time within the ledger's window (`DB_CLIENT_BUDGET`), at least `share`.
    let budget: Double

    enum Verdict: Equatable {
        case withinShare
        case overShare
        case overBudget(retryAfterSeconds: Int)
    }

    /// Who a request's database time is charged to: its account when the credentials name one (so clients behind
    /// one address are told apart), else its address (the forwarded client's behind a trusted proxy).
    static func client(of request: Request) -> String {
        if let account = request.account { return "account:" + account }
        return "address:" + request.clientAddress
    }

    /// Runs a request's work (its credentials' check, its handler) with its database time charged to its client.
    @Sendable static func chargingTheClient(
        _ request: Request, _ work: @Sendable () async -> Response
    ) async -> Response {
        await PGPool.$chargedClient.withValue(client(of: request)) { await work() }
    }

    func verdict(for client: String) -> Verdict {
        let use = ledger.recentUse(of: client)
        guard use > share, ledger.wasShortRecently() else { return .withinShare }
        guard use > budget else { return .overShare }
        // Use decays as e^(-t / window): below the budget again after window × ln(use / budget).
        let seconds = (ledger.window / .seconds(1)) * log(use / budget)
        return .overBudget(retryAfterSeconds: max(1, Int(seconds.rounded(.up))))
    }

    func recentUse(of client: String) -> Double { ledger.recentUse(of: client) }
}
