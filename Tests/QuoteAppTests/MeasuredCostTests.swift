import PGClient
@testable import QuoteApp
import QuoteAPI
import TestSupport
import XCTest

/// Cost by measurement: each request's database time is charged to its client (its account when signed in, else
/// its address), and while connections were short a client over its share is expensive and past its budget gets
/// `429` with `Retry-After`, whatever its route.
final class MeasuredCostTests: XCTestCase {
    func testTheVerdictFollowsMeasuredTimeAtTheEdgesOfShareAndBudget() async throws {
        let ledger = DatabaseTimeLedger()
        let pool = PGPool(
            connectionString: try TestDatabase.makeDatabase(), size: 2, ledger: ledger, logger: .init(label: "t"))
        defer { pool.shutdown() }
        try await PGPool.$chargedClient.withValue("address:10.0.0.1") {
            try await pool.withConnection { try $0.execute(unsafeSQL: "SELECT pg_sleep(0.2)") }
        }
        let use = ledger.recentUse(of: "address:10.0.0.1")
        XCTAssertGreaterThan(use, 0.15)
        // Connections not short: nobody is held back, however much they used.
        XCTAssertEqual(
            FairShare(ledger: ledger, share: 0.01, budget: 0.02).verdict(for: "address:10.0.0.1"), .withinShare)
        ledger.noteShortage()
        // At the edge of the share (just above what was used) and one past it.
        XCTAssertEqual(
            FairShare(ledger: ledger, share: use + 0.5, budget: 10).verdict(for: "address:10.0.0.1"), .withinShare)
        XCTAssertEqual(
            FairShare(ledger: ledger, share: use / 2, budget: 10).verdict(for: "address:10.0.0.1"), .overShare)
        // Past the budget: refused until the use decays below it.
        let verdict = FairShare(ledger: ledger, share: 0.001, budget: use / 4).verdict(for: "address:10.0.0.1")
        guard case .overBudget(let seconds) = verdict else { return XCTFail("expected over budget: \(verdict)") }
        // window × ln(4) ≈ 13.9 s with the default 10-s window.
        XCTAssert((13...15).contains(seconds), "\(seconds)")
        XCTAssertEqual(
            FairShare(ledger: ledger, share: 0.001, budget: 0.002).verdict(for: "address:10.0.0.2"), .withinShare)
    }

    func testASignedInClientPastItsBudgetGets429WithRetryAfterAndOthersAreServed() async throws {
        let app = try await startTestApp { configuration in
            // Far above one request's own cost (its session check is charged too), so that the light client's first
            // request stays within it on a slow machine.
            configuration.databaseClientShareMilliseconds = 5
            configuration.databaseClientBudgetMilliseconds = 10
            configuration.httpRefusalDelay = 0
        }
        let heavy = try await app.makeUser()
        let light = try await app.makeUser()
        let ledger = app.application.databaseTime
        let client = "account:" + heavy.id.uuidString.lowercased()
        // Without a shortage of connections the heavy client is served, however much it uses.
        for _ in 0..<1000 where ledger.recentUse(of: client) <= 0.02 {
            XCTAssertEqual(try app.client.get("/v1/favorites", headers: heavy.authorization).status, 200)
        }
        XCTAssertGreaterThan(ledger.recentUse(of: client), 0.01, "its database time was charged to its account")
        XCTAssertEqual(ledger.recentUse(of: "account:" + light.id.uuidString.lowercased()), 0)

        ledger.noteShortage()
        let refused = try app.client.get("/v1/favorites", headers: heavy.authorization)
        XCTAssertEqual(refused.status, 429, refused.text)
        let wait = try XCTUnwrap(Int(refused.header("Retry-After") ?? ""))
        XCTAssertGreaterThanOrEqual(wait, 1)
        XCTAssertEqual(try refused.jsonObject()["code"] as? String, "rate_limited")
        // Another account behind the same address is its own client.
        XCTAssertEqual(try app.client.get("/v1/favorites", headers: light.authorization).status, 200)
        // So is another address, anonymously.
        let other = try HTTPTestConnection(port: app.application.port, source: "127.0.0.7")
        XCTAssertEqual(try other.send("GET", "/v1/categories").status, 200)
    }

    func testWithRateLimitsOffNothingIsChargedOrRefused() async throws {
        let app = try await startTestApp { configuration in
            configuration.rateLimitsEnabled = false
            configuration.databaseClientShareMilliseconds = 1
            configuration.databaseClientBudgetMilliseconds = 1
        }
        let user = try await app.makeUser()
        app.application.databaseTime.noteShortage()
        for _ in 0..<20 {
            XCTAssertEqual(try app.client.get("/v1/favorites", headers: user.authorization).status, 200)
        }
        XCTAssertEqual(app.application.databaseTime.recentUse(of: "account:" + user.id.uuidString.lowercased()), 0)
    }
}
