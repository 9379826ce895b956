import Foundation
import PGClient
import TestSupport
import XCTest

/// A connection to a fresh, empty database.
func makeConnection() throws -> PGConnection {
    try PGConnection(connectionString: TestDatabase.makeDatabase())
}

/// The single row of `rows`, failing the test if there is not exactly one.
func single(_ rows: PGRows, file: StaticString = #filePath, line: UInt = #line) throws -> PGRow {
    XCTAssertEqual(rows.count, 1, file: file, line: line)
    return try XCTUnwrap(rows.first, file: file, line: line)
}

/// Asserts `body` throws a `PGError` and returns it.
@discardableResult
func assertPGError(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> PGError? {
    do {
        try body()
        XCTFail("expected a PGError", file: file, line: line)
    } catch let error as PGError {
        return error
    } catch {
        XCTFail("expected a PGError, got \(error)", file: file, line: line)
    }
    return nil
}

/// Asserts `body` throws a `PGError` and returns it.
@discardableResult
func assertPGErrorAsync(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async
    -> PGError?
{
    do {
        try await body()
        XCTFail("expected a PGError", file: file, line: line)
    } catch let error as PGError {
        return error
    } catch {
        XCTFail("expected a PGError, got \(error)", file: file, line: line)
    }
    return nil
}
