import Foundation
import TestSupport
import XCTest

/// The Realtime door's part of `/metrics`: gauges of sockets and channels, counts of messages and changes, the
/// delivery delay histogram, refusals and closes by reason, and what was dropped, each moving as a client acts.
final class RealtimeMetricsTests: XCTestCase {
    private func scrape(_ app: TestApp) throws -> [String: Double] {
        let response = try app.client.get("/metrics")
        XCTAssertEqual(response.status, 200)
        var samples: [String: Double] = [:]
        for line in response.text.split(separator: "\n") where line.hasPrefix("realtime_") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// Scrapes until `series` reaches `value` (the server counts a close after the client sees it), at most ~5 s.
    private func eventually(_ app: TestApp, _ series: String, _ value: Double) async throws -> Double? {
        var seen: Double?
        for _ in 0..<50 {
            seen = try scrape(app)[series]
            if seen == value { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return seen
    }

    func testCountsFollowWhatClientsDo() async throws {
        let app = try await startTestApp { $0.realtimeChannelsPerConnection = 2 }
        try await app.untilRealtimeListens()
        let idle = try scrape(app)
        XCTAssertEqual(idle["realtime_sockets"], 0)
        XCTAssertEqual(idle[#"realtime_channels{kind="all"}"#], 0)
        XCTAssertEqual(idle["realtime_listening"], 1)
        XCTAssertEqual(idle["realtime_changes_delivered_total"], 0)

        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One"])
        let socket = try app.realtime()
        let changes: [[String: Any]] = [["event": "*", "schema": "public", "table": "user_favorites"]]
        XCTAssertEqual(status(socket.join("realtime:a", changes: changes, token: user.accessToken)), "ok")
        XCTAssertEqual(status(socket.join("realtime:b", presence: ["key": "me"])), "ok")
        XCTAssertEqual(status(socket.join("realtime:c")), "error", "past 2 channels")
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        XCTAssertNotNil(socket.nextChange())

        let busy = try scrape(app)
        XCTAssertEqual(busy["realtime_sockets"], 1)
        XCTAssertEqual(busy[#"realtime_channels{kind="all"}"#], 2)
        XCTAssertEqual(busy[#"realtime_channels{kind="postgres_changes"}"#], 1)
        XCTAssertEqual(busy[#"realtime_channels{kind="presence"}"#], 1)
        XCTAssertEqual(busy["realtime_messages_received_total"], 3, "three joins")
        // Three replies, `system`, `presence_state` and the change.
        XCTAssertEqual(busy["realtime_messages_sent_total"], 6)
        XCTAssertEqual(busy["realtime_changes_delivered_total"], 1)
        XCTAssertEqual(busy["realtime_delivery_delay_seconds_count"], 1)
        XCTAssertEqual(busy[#"realtime_delivery_delay_seconds_bucket{le="+Inf"}"#], 1)
        XCTAssertEqual(busy[#"realtime_refusals_total{reason="channels_per_connection"}"#], 1)
        XCTAssertEqual(busy[#"realtime_refusals_total{reason="oversize"}"#], 0)

        // A message past the size limit closes the socket with 1009: counted as oversize.
        socket.sendFrame(opcode: 0x1, payload: Array(repeating: UInt8(ascii: "x"), count: 64 * 1024 + 1))
        XCTAssertEqual(socket.closeCode(), 1009)
        let oversize = try await eventually(app, #"realtime_refusals_total{reason="oversize"}"#, 1)
        XCTAssertEqual(oversize, 1)
        XCTAssertEqual(try scrape(app)["realtime_sockets"], 0)

        // A binary broadcast to a vsn 1.0.0 socket is dropped for it, and counted.
        let sender = try app.realtime(vsn: "2.0.0")
        let old = try app.realtime()
        XCTAssertEqual(sender.joinV2("realtime:d"), "ok")
        XCTAssertEqual(status(old.join("realtime:d")), "ok")
        let fields = ["1", "9", "realtime:d", "e", ""].map { Array($0.utf8) }
        sender.sendFrame(opcode: 0x2, payload: [3] + fields.map { UInt8($0.count) } + [0] + fields.flatMap { $0 } + [1])
        let dropped = try await eventually(app, #"realtime_dropped_total{what="binary_for_vsn_1"}"#, 1)
        XCTAssertEqual(dropped, 1)
    }

    func testConnectionsPastTheAddressLimitAreCounted() async throws {
        let app = try await startTestApp { $0.realtimeConnectionsPerAddress = 1 }
        let first = try app.realtime()
        XCTAssertEqual(first.status, 101)
        XCTAssertEqual(try app.realtime().status, 429)
        XCTAssertEqual(try scrape(app)[#"realtime_refusals_total{reason="connections_per_address"}"#], 1)
    }
}
