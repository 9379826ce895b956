import PGClient
import TestSupport
import XCTest

/// What every connection's session is set to, and which of it a connection string may change.
final class SessionDefaultsTests: XCTestCase {
    private func setting(_ name: String, on connection: PGConnection) throws -> String {
        try single(connection.query("SELECT current_setting(\(name)) AS value")).decode("value", as: String.self)
    }

    func testSessionIsUTCWithISODatesAndNoJIT() throws {
        let connection = try makeConnection()
        XCTAssertEqual(try setting("TimeZone", on: connection), "UTC")
        XCTAssertEqual(try setting("DateStyle", on: connection), "ISO, MDY")
        XCTAssertEqual(try setting("application_name", on: connection), "quote-server")
        // JIT compiled sub-millisecond statements anew on every run (bench/README.md, "Session 41: no JIT").
        XCTAssertEqual(try setting("jit", on: connection), "off")
    }

    func testConnectionStringOptionsReplaceTheDefaultOnes() throws {
        let url = try TestDatabase.makeDatabase()
        let separator = url.contains("?") ? "&" : "?"
        let connection = try PGConnection(connectionString: url + separator + "options=-c%20jit%3Don")
        XCTAssertEqual(try setting("jit", on: connection), "on")
        XCTAssertEqual(try setting("TimeZone", on: connection), "UTC")
    }
}
