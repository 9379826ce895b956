import Foundation
import TestSupport
import XCTest

/// Exports whose client stops reading are cut after `CONSOLE_EXPORT_STALL_SECONDS` (visibly: no last chunk), giving
/// back their stream and their export slot; exports running at once are capped per owner and in all.
final class ConsoleExportLimitsTests: XCTestCase {
    private let bulkExport = "/console/audit.csv?action=test.bulk"

    /// 10,000 audit rows of about 1 KiB: their export (about 10 MiB) outgrows every buffer on the way, so a client
    /// that stops reading holds it up.
    private func fillAudit(_ app: TestApp) async throws {
        // In batches: each well inside the statement timeout on a busy machine.
        for batch in 0..<10 {
            try await app.withConnection { connection in
                try connection.query(
                    """
                    INSERT INTO console_audit (owner_email, action, target, at, before)
                    SELECT 'bulk@example.com', 'test.bulk', 'item ' || n, timestamptz '2026-01-01' + n * interval '1 ms',
                           jsonb_build_object('text', repeat('x', 1000))
                    FROM generate_series(\(batch * 1000 + 1), \(batch * 1000 + 1000)) AS n
                    """)
            }
        }
    }

    /// An export whose client reads its head, then nothing: a small receive buffer, so the server's side fills.
    private func stalledExport(_ app: TestApp, _ cookie: String, file: StaticString = #filePath, line: UInt = #line)
        throws -> EventStreamTestClient
    {
        let client = try EventStreamTestClient(
            port: app.application.port, path: bulkExport, headers: ["Cookie": cookie], receiveBuffer: 4096)
        XCTAssertEqual(try client.readHead(), 200, file: file, line: line)
        return client
    }

    func testAStalledDownloadIsCutAndGivesBackItsStreamAndSlot() async throws {
        let app = try await startTestApp {
            $0.consoleExportStallSeconds = 1
            $0.consoleExportsPerOwner = 1
        }
        let cookie = try await app.consoleOwner()
        try await fillAudit(app)
        let stalled = try stalledExport(app, cookie)
        let server = app.application.server
        // Bounded: 20 s for a 1 s stall limit (libmicrohttpd's own idle timeout, 30 s, is not what cuts it).
        for _ in 0..<1000 where server.openStreams > 0 { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(server.openStreams, 0, "the stalled download was cut and its stream forgotten")
        XCTAssertTrue(stalled.ends(), "its connection is closed")
        XCTAssertFalse(stalled.completed, "cut without the last chunk: the download fails, it does not look whole")

        // Its slot came back (one export per owner here): the owner's next export runs, whole.
        var next = try app.consoleGet(bulkExport, cookie: cookie)
        for _ in 0..<250 where next.status == 429 {
            try await Task.sleep(for: .milliseconds(20))
            next = try app.consoleGet(bulkExport, cookie: cookie)
        }
        XCTAssertEqual(next.status, 200)
        XCTAssertEqual(next.text.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count, 10001)
    }

    func testExportsAreCappedPerOwnerAndInAllAtTheEdgeAndOnePast() async throws {
        let app = try await startTestApp {
            $0.consoleExportsPerOwner = 2
            $0.consoleExports = 3
        }
        let alice = try await app.consoleOwner("alice@example.com")
        let bob = try await app.consoleOwner("bob@example.com")
        try await fillAudit(app)

        // Alice at her cap: two exports held open by clients that stopped reading.
        var held = [try stalledExport(app, alice), try stalledExport(app, alice)]
        let third = try app.consoleGet("/console/quotes/export.json", cookie: alice)
        XCTAssertEqual(third.status, 429, "one past the per-owner cap")
        XCTAssertEqual(third.header("Retry-After"), "5")
        XCTAssertTrue(third.text.contains("You have 2 exports running"), third.text)
        XCTAssertEqual(third.header("Content-Security-Policy"), TestApp.consoleContentSecurityPolicy)

        // Bob's first is the third in all: the edge of the overall cap; his second is one past it.
        held.append(try stalledExport(app, bob))
        let fourth = try app.consoleGet("/console/quotes/export.csv", cookie: bob)
        XCTAssertEqual(fourth.status, 429, "one past the overall cap")
        XCTAssertEqual(fourth.header("Retry-After"), "5")
        XCTAssertTrue(fourth.text.contains("3 exports are running"), fourth.text)

        // A download that ends (its client gone) gives its slot back.
        held.removeFirst()
        var again = try app.consoleGet("/console/quotes/export.csv", cookie: bob)
        for _ in 0..<250 where again.status == 429 {
            try await Task.sleep(for: .milliseconds(20))
            again = try app.consoleGet("/console/quotes/export.csv", cookie: bob)
        }
        XCTAssertEqual(again.status, 200, "a slot freed by a closed download is taken again")
        withExtendedLifetime(held) {}
    }
}
