import Foundation
import TestSupport
import XCTest

/// `GET /metrics`: Prometheus text whose counts follow the traffic and whose labels clients cannot grow.
final class MetricsTests: XCTestCase {
    /// The value of the sample line that starts with `series` (name and labels exactly as exposed), if any.
    private func sample(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap {
            Double($0.split(separator: " ").last ?? "")
        }
    }

    private func scrape(_ app: TestApp) throws -> String {
        let response = try app.client.get("/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
        return response.text
    }

    func testRequestCountsAndLatencyFollowTraffic() async throws {
        let app = try await startTestApp()
        for _ in 0..<2 { XCTAssertEqual(try app.client.get("/health").status, 200) }
        let series = #"http_requests_total{method="GET",route="/health",status="200"}"#
        let before = try XCTUnwrap(sample(series, in: try scrape(app)))
        XCTAssertGreaterThanOrEqual(before, 2)
        for _ in 0..<3 { XCTAssertEqual(try app.client.get("/health").status, 200) }
        XCTAssertEqual(try app.client.get("/v1/quotes/not-a-uuid").status, 404)
        let text = try scrape(app)
        XCTAssertEqual(sample(series, in: text), before + 3)
        XCTAssertEqual(sample(#"http_requests_total{method="GET",route="/v1/quotes/{id}",status="404"}"#, in: text), 1)
        XCTAssertEqual(sample(#"http_request_duration_seconds_count{route="/health"}"#, in: text), before + 3)
        XCTAssertNotNil(sample(#"http_request_duration_seconds_bucket{route="/health",le="+Inf"}"#, in: text))
    }

    func testUnknownPathsAndMethodsDoNotCreateLabels() async throws {
        let app = try await startTestApp()
        for index in 0..<5 { XCTAssertEqual(try app.client.get("/no-such-route/\(index)").status, 404) }
        XCTAssertEqual(try app.client.send("BREW", "/health").status, 405)
        let text = try scrape(app)
        XCTAssertFalse(text.contains("no-such-route"), "raw paths must never become labels")
        XCTAssertFalse(text.contains("BREW"))
        XCTAssertEqual(sample(#"http_requests_total{method="GET",route="unmatched",status="404"}"#, in: text), 5)
        XCTAssertEqual(sample(#"http_requests_total{method="other",route="unmatched",status="405"}"#, in: text), 1)
    }

    func testPoolHashingMemoryAndMailGauges() async throws {
        // Mail to an SMTP port where nobody listens stays in the outbox.
        let app = try await startTestApp { $0.smtpURL = "smtp://127.0.0.1:1" }
        let user = try await app.makeUser()
        XCTAssertEqual(try app.client.send("POST", "/v1/auth/password-reset", json: ["email": user.email]).status, 202)
        try await app.application.context.mail.countBacklog()
        let text = try scrape(app)
        XCTAssertEqual(sample(#"db_pool_connections{state="size"}"#, in: text), 4)
        XCTAssertNotNil(sample(#"db_pool_connections{state="in_use"}"#, in: text))
        XCTAssertEqual(sample("db_pool_waiting_jobs", in: text), 0)
        XCTAssertEqual(sample("password_hashing_queue_depth", in: text), 0)
        XCTAssertEqual(sample("mail_outbox_backlog", in: text), 1)
        XCTAssertGreaterThan(try XCTUnwrap(sample("process_resident_memory_bytes", in: text)), 1_000_000)
    }
}
