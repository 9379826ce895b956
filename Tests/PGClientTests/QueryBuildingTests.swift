import Foundation
import XCTest
@testable import PGClient

/// PGQuery construction and value encoding, without a server.
final class QueryBuildingTests: XCTestCase {
    func testInterpolationBecomesNumberedParameters() {
        let id = 42
        let category = "wisdom"
        let query: PGQuery = "SELECT * FROM quotes WHERE id = \(id) AND category = \(category)"
        XCTAssertEqual(query.sql, "SELECT * FROM quotes WHERE id = $1 AND category = $2")
        XCTAssertEqual(query.binds.map(\.value), [.text("42"), .text("wisdom")])
        XCTAssertEqual(query.binds.map(\.type), [.int8, .unknown])
    }

    func testDescriptionHidesParameters() {
        let secret = "hunter2"
        let query: PGQuery = "SELECT * FROM users WHERE password = \(secret)"
        XCTAssertEqual(query.description, "SELECT * FROM users WHERE password = ****")
        XCTAssertFalse("\(query)".contains(secret))
        XCTAssertFalse(String(reflecting: query.binds[0]).contains(secret))
        var dumped = ""
        dump(query.binds[0], to: &dumped)
        XCTAssertFalse(dumped.contains(secret))
    }

    func testOptionalNilIsNull() {
        let missing: String? = nil
        let present: Int32? = 7
        let query: PGQuery = "VALUES (\(missing), \(present))"
        XCTAssertEqual(query.binds.map(\.value), [.null, .text("7")])
        XCTAssertEqual(query.binds[1].type, .int4)
    }

    func testAppendRenumbersParameters() {
        var query: PGQuery = "SELECT * FROM quotes WHERE author = \("Seneca")"
        query.append(" AND year > \(50)")
        query.append(" AND category = \("stoic")")
        XCTAssertEqual(query.sql, "SELECT * FROM quotes WHERE author = $1 AND year > $2 AND category = $3")
        XCTAssertEqual(query.binds.count, 3)

        let filter: PGQuery = "x = \(1) AND y = \(2)"
        let combined: PGQuery = "SELECT \(0) WHERE \(filter) OR z = \(3)"
        XCTAssertEqual(combined.sql, "SELECT $1 WHERE x = $2 AND y = $3 OR z = $4")
        XCTAssertEqual(combined.binds.map(\.value), [.text("0"), .text("1"), .text("2"), .text("3")])

        let joined = ["a = \(1)" as PGQuery, "b = \(2)" as PGQuery].joined(separator: " AND ")
        XCTAssertEqual(joined.sql, "a = $1 AND b = $2")
    }

    func testUnsafeSQLWithBindsIsRenumberedOutsideLiterals() {
        let raw = PGQuery(
            unsafeSQL: "y = $1 AND s = '$1' AND \"$1\" = $2 AND b = $$ $1 $$ -- $1\n AND z = $2",
            binds: [PGBind(5), PGBind(6)])
        var query: PGQuery = "SELECT \(1) WHERE "
        query.append(raw)
        XCTAssertEqual(
            query.sql, "SELECT $1 WHERE y = $2 AND s = '$1' AND \"$1\" = $3 AND b = $$ $1 $$ -- $1\n AND z = $3")
        XCTAssertEqual(query.binds.count, 3)
    }

    func testUnsafeSQLInterpolationAndIdentifiers() {
        let direction = "DESC"
        let query: PGQuery = "SELECT * FROM \(identifier: "odd\"name") ORDER BY id \(unsafeSQL: direction)"
        XCTAssertEqual(query.sql, "SELECT * FROM \"odd\"\"name\" ORDER BY id DESC")
        XCTAssertTrue(query.binds.isEmpty)
    }

    func testArrayLiteralsAreQuotedAndEscaped() {
        XCTAssertEqual(
            ["a", "b,c", "q\"uote", "back\\slash", "NULL", ""].pgEncode(),
            .text(#"{"a","b,c","q\"uote","back\\slash","NULL",""}"#))
        XCTAssertEqual([String]().pgEncode(), .text("{}"))
        XCTAssertEqual([UInt8]([1, 2]).pgEncode(), .binary([1, 2]))
        XCTAssertEqual([UInt8].pgType, .bytea)
    }

    func testArrayLiteralParsing() {
        XCTAssertEqual(parseArrayLiteral("{}"), [])
        XCTAssertEqual(
            parseArrayLiteral(#"{a,"b c",NULL,"NULL","x\"y","\\"}"#), ["a", "b c", nil, "NULL", "x\"y", "\\"])
        XCTAssertNil(parseArrayLiteral("{{1,2},{3,4}}"))
        XCTAssertNil(parseArrayLiteral("[0:1]={1,2}"))
        XCTAssertNil(parseArrayLiteral("{a,}"))
        XCTAssertNil(parseArrayLiteral(#"{"unterminated}"#))
    }

    func testDateEncodingIsUTCWithMilliseconds() {
        XCTAssertEqual(Date(timeIntervalSince1970: 0).pgEncode(), .text("1970-01-01 00:00:00.000+00"))
        XCTAssertEqual(Date(timeIntervalSince1970: 1_714_566_896.789).pgEncode(), .text("2024-05-01 12:34:56.789+00"))
        XCTAssertEqual(Date(timeIntervalSince1970: -0.001).pgEncode(), .text("1969-12-31 23:59:59.999+00"))
    }

    func testTimestampParsing() throws {
        XCTAssertEqual(try Date(pgText: "2024-05-01 12:34:56.789+00"), Date(timeIntervalSince1970: 1_714_566_896.789))
        XCTAssertEqual(try Date(pgText: "2024-05-01 14:34:56.789+02"), Date(timeIntervalSince1970: 1_714_566_896.789))
        XCTAssertEqual(try Date(pgText: "2024-05-01 12:34:56+00"), Date(timeIntervalSince1970: 1_714_566_896))
        XCTAssertEqual(try Date(pgText: "1970-01-01 00:00:00.000001+00"), Date(timeIntervalSince1970: 0.000001))
        XCTAssertEqual(try Date(pgText: "infinity"), .distantFuture)
        XCTAssertThrowsError(try Date(pgText: "2024-02-30 00:00:00+00"))
        XCTAssertThrowsError(try Date(pgText: "0044-03-15 12:00:00+00 BC"))
        XCTAssertThrowsError(try Date(pgText: "yesterday"))
    }

    func testTimestampParsingToMicroseconds() throws {
        func micros(_ text: String) throws -> Int64 { try PGTimestamp(pgText: text).microsecondsSince1970 }
        XCTAssertEqual(try micros("1970-01-01 00:00:00.000001+00"), 1)
        XCTAssertEqual(try micros("1970-01-01 00:00:00.5+00"), 500_000)
        XCTAssertEqual(try micros("1970-01-01"), 0)
        XCTAssertEqual(try micros("1970-01-02T00:00:00Z"), 86_400_000_000)
        XCTAssertEqual(try micros("1970-01-01 05:30:15+05:30:15"), 0)
        XCTAssertEqual(try micros("1969-12-31 19:00:00-05"), 0)
        XCTAssertEqual(try micros("1970-01-01 00:00:00"), 0, "a timestamp without zone is UTC")
        XCTAssertEqual(try micros("10000-01-01 00:00:00+00"), 253_402_300_800_000_000, "five-digit years")
        for malformed in [
            "1970-01-01 00:00:00.+00", "1970-01-01 00:00:00.1234567+00", "1970-01-01 0:00:00+00",
            "1970-01-01 00:00:00+00 ", "1970-01-01 24:00:00+00", "1970-13-01", "1970-01-01 00:00:00+0",
            "197-01-01", "1970-01-01 00:00:00x", "", "infinity",
        ] {
            XCTAssertThrowsError(try PGTimestamp(pgText: malformed), malformed)
        }
    }

    func testPGDate() throws {
        XCTAssertEqual(PGDate(string: "2024-02-29")?.description, "2024-02-29")
        for text in ["0001-01-01", "0099-10-05", "9999-12-31", "2000-01-10"] {
            XCTAssertEqual(PGDate(string: text)?.description, text)
        }
        XCTAssertNil(PGDate(string: "2023-02-29"))
        XCTAssertNil(PGDate(string: "2024-2-9"))
        XCTAssertNil(PGDate(string: "2024-02-29T00:00"))
        XCTAssertEqual(PGDate(Date(timeIntervalSince1970: 86_400 * 365 - 1)).description, "1970-12-31")
        XCTAssertEqual(PGDate(string: "1999-12-31")?.date, Date(timeIntervalSince1970: 946_598_400))
        let json = try JSONEncoder().encode([PGDate(string: "2001-09-09")!])
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"["2001-09-09"]"#)
        XCTAssertEqual(try JSONDecoder().decode([PGDate].self, from: json), [PGDate(string: "2001-09-09")!])
    }

    func testErrorDescriptions() {
        let error = PGError(
            kind: .server, sqlState: .uniqueViolation, message: "duplicate key value",
            detail: "Key (email)=(a@example.com) already exists.", constraint: "users_email_key")
        XCTAssertFalse(error.description.contains("a@example.com"))
        XCTAssertTrue(error.description.contains("23505"))
        XCTAssertTrue(error.description.contains("users_email_key"))
        XCTAssertTrue(error.debugDescription.contains("a@example.com"))
        XCTAssertFalse(error.isConnectionFailure)
        XCTAssertTrue(PGError(kind: .server, sqlState: .adminShutdown, message: "terminating").isConnectionFailure)
        XCTAssertTrue(PGError(kind: .connection, message: "refused").isServiceUnavailable)
        XCTAssertTrue(PGError(kind: .poolExhausted, message: "busy").isServiceUnavailable)
    }
}
