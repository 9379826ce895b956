import Foundation
import PGClient
import TestSupport
import XCTest

/// Every supported type goes into a real table and comes back unchanged.
final class TypeRoundTripTests: XCTestCase {
    private var connection: PGConnection!

    override func setUpWithError() throws {
        connection = try makeConnection()
        try connection.execute(
            unsafeSQL: """
                CREATE TABLE everything (
                    id serial PRIMARY KEY,
                    t text, i8 bigint, i4 integer, i2 smallint, b boolean, f8 double precision, f4 real,
                    u uuid, ts timestamptz, d date, by bytea, j jsonb, js json,
                    ta text[], ua uuid[], ia bigint[]
                )
                """)
    }

    override func tearDown() {
        connection = nil
    }

    func testAllTypesRoundTrip() throws {
        let text = "héllo wörld 😀 日本語 👨‍👩‍👧 'quoted' \"double\" back\\slash\ttab\nnewline"
        let uuid = UUID()
        let timestamp = Date(timeIntervalSince1970: 1_714_566_896.789)
        let date = try XCTUnwrap(PGDate(string: "2024-02-29"))
        let bytes: [UInt8] = (0...255).map { UInt8($0) }
        let json = try PGJSON(encoding: ["quote": "Know thyself", "author": "Socrates"])
        let texts = [
            "plain", "with,comma", "with \"quotes\"", "back\\slash", "NULL", "", "{braces}", " spaced ", "ünï",
        ]
        let uuids = [UUID(), UUID()]
        let ints = [Int.min, -1, 0, Int.max]

        let id = try single(
            connection.query(
                """
                INSERT INTO everything (t, i8, i4, i2, b, f8, f4, u, ts, d, by, j, js, ta, ua, ia)
                VALUES (\(text), \(Int64.max), \(Int32.min), \(Int16.max), \(true), \(0.1), \(Float(1.5)), \(uuid),
                        \(timestamp), \(date), \(bytes), \(json), \(json), \(texts), \(uuids), \(ints))
                RETURNING id
                """)
        ).decode("id", as: Int.self)

        let row = try single(connection.query("SELECT * FROM everything WHERE id = \(id)"))
        XCTAssertEqual(try row.decode("t", as: String.self), text)
        XCTAssertEqual(try row.decode("i8", as: Int64.self), .max)
        XCTAssertEqual(try row.decode("i8", as: Int.self), .max)
        XCTAssertEqual(try row.decode("i4", as: Int32.self), .min)
        XCTAssertEqual(try row.decode("i2", as: Int16.self), .max)
        XCTAssertEqual(try row.decode("b", as: Bool.self), true)
        XCTAssertEqual(try row.decode("f8", as: Double.self), 0.1)
        XCTAssertEqual(try row.decode("f4", as: Float.self), 1.5)
        XCTAssertEqual(try row.decode("u", as: UUID.self), uuid)
        XCTAssertEqual(try row.decode("ts", as: Date.self), timestamp)
        XCTAssertEqual(try row.decode("d", as: PGDate.self), date)
        XCTAssertEqual(try row.decode("by", as: [UInt8].self), bytes)
        XCTAssertEqual(try row.decode("by", as: Data.self), Data(bytes))
        XCTAssertEqual(
            try row.decode("j", as: PGJSON.self).decode([String: String].self),
            ["quote": "Know thyself", "author": "Socrates"])
        XCTAssertEqual(
            try row.decode("js", as: PGJSON.self).decode([String: String].self),
            ["quote": "Know thyself", "author": "Socrates"])
        XCTAssertEqual(try row.decode("ta", as: [String].self), texts)
        XCTAssertEqual(try row.decode("ua", as: [UUID].self), uuids)
        XCTAssertEqual(try row.decode("ia", as: [Int].self), ints)
        // Column positions work too.
        XCTAssertEqual(try row.decode(at: 1, as: String.self), text)
    }

    func testUUIDsTravelAsTheDatabasesOwnText() throws {
        let connection = try makeConnection()
        for uuid in (0..<50).map({ _ in UUID() }) + [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))] {
            XCTAssertEqual(uuid.canonicalText, uuid.uuidString.lowercased())
            XCTAssertEqual(UUID(canonicalText: uuid.canonicalText), uuid)
            // PostgreSQL prints a uuid in the same lower-case form it is sent in.
            let row = try XCTUnwrap(connection.query("SELECT \(uuid)::text AS t, \(uuid) AS u").first)
            XCTAssertEqual(try row.decode("t", as: String.self), uuid.canonicalText)
            XCTAssertEqual(try row.decode("u", as: UUID.self), uuid)
        }
    }

    func testNullsRoundTripAsNil() throws {
        let none: String? = nil
        let noInt: Int? = nil
        let noDate: Date? = nil
        let noUUID: UUID? = nil
        let noBytes: [UInt8]? = nil
        let noJSON: PGJSON? = nil
        let noList: [String]? = nil
        let noDay: PGDate? = nil
        let noBool: Bool? = nil
        let noDouble: Double? = nil
        let id = try single(
            connection.query(
                """
                INSERT INTO everything (t, i8, b, f8, u, ts, d, by, j, ta)
                VALUES (\(none), \(noInt), \(noBool), \(noDouble), \(noUUID), \(noDate), \
                \(noDay), \(noBytes), \(noJSON), \(noList))
                RETURNING id
                """)
        ).decode("id", as: Int.self)
        let row = try single(connection.query("SELECT * FROM everything WHERE id = \(id)"))
        XCTAssertNil(try row.decode("t", as: String?.self))
        XCTAssertNil(try row.decode("i8", as: Int?.self))
        XCTAssertNil(try row.decode("b", as: Bool?.self))
        XCTAssertNil(try row.decode("f8", as: Double?.self))
        XCTAssertNil(try row.decode("u", as: UUID?.self))
        XCTAssertNil(try row.decode("ts", as: Date?.self))
        XCTAssertNil(try row.decode("d", as: PGDate?.self))
        XCTAssertNil(try row.decode("by", as: [UInt8]?.self))
        XCTAssertNil(try row.decode("j", as: PGJSON?.self))
        XCTAssertNil(try row.decode("ta", as: [String]?.self))
        XCTAssertTrue(row.isNull("t"))

        // Present values decode through Optional too.
        let present = try single(connection.query("SELECT \(Int?.some(5)) AS five"))
        XCTAssertEqual(try present.decode("five", as: Int?.self), 5)

        // A NULL read as a non-optional type throws, naming the column.
        let error = assertPGError { _ = try row.decode("ts", as: Date.self) }
        XCTAssertEqual(error?.kind, .decoding)
        XCTAssertEqual(error?.column, "ts")
        XCTAssertTrue(error?.description.contains("\"ts\"") ?? false)
    }

    func testTimestampsReadToTheExactMicrosecond() throws {
        // PostgreSQL's own count of microseconds is the reference, for values a Date would round.
        let values = [
            "2026-11-22 23:49:48.286123+00", "1999-12-31 23:59:59.999999+00", "2024-02-29 12:00:00.000001+00",
            "1970-01-01 00:00:00+00", "1969-12-31 23:59:59.5+00", "2106-02-07 06:28:15.999999+00",
            "2024-05-01 12:34:56.7+05:30",
        ]
        for value in values {
            let row = try single(
                connection.query(
                    """
                    SELECT \(value)::timestamptz AS ts, \
                    (extract(epoch FROM \(value)::timestamptz) * 1000000)::int8 AS us
                    """))
            let timestamp = try row.decode("ts", as: PGTimestamp.self)
            XCTAssertEqual(timestamp.microsecondsSince1970, try row.decode("us", as: Int64.self), value)
            XCTAssertEqual(
                timestamp.date.timeIntervalSince1970, try row.decode("ts", as: Date.self).timeIntervalSince1970,
                accuracy: 1e-6, value)
        }
        // And back, as a parameter: PostgreSQL reads exactly the same moment, before 1970 and BC too.
        let moments: [Int64] = [
            0, 1, -1, 1_795_391_388_286_123, 946_684_799_999_999, -86_400_000_001,
            253_402_300_799_999_999, 253_402_300_800_000_000, -62_135_596_800_000_000, -62_135_596_800_000_001,
        ]
        for micros in moments {
            let sent = PGTimestamp(microsecondsSince1970: micros)
            let row = try single(
                connection.query(
                    """
                    SELECT (extract(epoch FROM \(sent)) * 1000000)::int8 AS us, \(sent) AS ts
                    """))
            XCTAssertEqual(try row.decode("us", as: Int64.self), micros, "\(micros)")
            if micros >= -62_135_596_800_000_000 {  // from 1 AD on, it reads back too
                XCTAssertEqual(try row.decode("ts", as: PGTimestamp.self), sent, "\(micros)")
            }
        }
        // Infinity has no position in microseconds.
        let infinite = try single(connection.query("SELECT 'infinity'::timestamptz AS ts"))
        XCTAssertEqual(assertPGError { _ = try infinite.decode("ts", as: PGTimestamp.self) }?.kind, .decoding)
    }

    func testBigBytea() throws {
        var generator = SystemRandomNumberGenerator()
        let blob = (0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let id = try single(connection.query("INSERT INTO everything (by) VALUES (\(blob)) RETURNING id")).decode(
            "id", as: Int.self)
        let row = try single(connection.query("SELECT by, length(by) AS size FROM everything WHERE id = \(id)"))
        XCTAssertEqual(try row.decode("size", as: Int.self), 1_048_576)
        XCTAssertEqual(try row.decode("by", as: [UInt8].self), blob)
        XCTAssertEqual(try row.decode("by", as: Data.self), Data(blob))

        let empty = try single(connection.query("SELECT \([UInt8]()) AS e, \(Data([0, 0xff])) AS d"))
        XCTAssertEqual(try empty.decode("e", as: [UInt8].self), [])
        XCTAssertEqual(try empty.decode("d", as: Data.self), Data([0, 0xff]))
    }

    func testTimestampsKeepMilliseconds() throws {
        let dates = [
            Date(timeIntervalSince1970: 0),
            Date(timeIntervalSince1970: 1_714_566_896.001),
            Date(timeIntervalSince1970: 1_714_566_896.999),
            Date(timeIntervalSince1970: -1_234_567.891),
            Date(timeIntervalSince1970: 32_503_680_000.5),  // year 3000
        ]
        for date in dates {
            let row = try single(
                connection.query(
                    """
                    SELECT \(date) AS ts, extract(epoch FROM \(date))::text AS epoch, \(date)::timestamp::text AS utc
                    """))
            XCTAssertEqual(try row.decode("ts", as: Date.self), date)
            XCTAssertEqual(
                try Double(row.decode("epoch", as: String.self)) ?? .nan, date.timeIntervalSince1970, accuracy: 0.0005)
        }
        // The server stores what we meant in UTC, whatever its own time zone.
        let row = try single(connection.query("SELECT \(Date(timeIntervalSince1970: 0))::timestamp::text AS utc"))
        XCTAssertEqual(try row.decode("utc", as: String.self), "1970-01-01 00:00:00")
        // Microseconds from the server are read (and rounded only by Double).
        let micro = try single(connection.query("SELECT '2024-01-01 00:00:00.123456+00'::timestamptz AS ts"))
        XCTAssertEqual(
            try micro.decode("ts", as: Date.self).timeIntervalSince1970, 1_704_067_200.123456, accuracy: 1e-6)
        // A session in another zone still reads correct instants: the decoder honours offsets.
        try connection.execute(unsafeSQL: "SET TimeZone = 'Asia/Kolkata'")
        let shifted = try single(connection.query("SELECT \(dates[1]) AS ts"))
        XCTAssertEqual(try shifted.decode("ts", as: Date.self), dates[1])
        try connection.execute(unsafeSQL: "SET TimeZone = 'UTC'")
    }

    func testDatesAndSpecialNumbers() throws {
        for text in ["0001-01-01", "1970-01-01", "2024-02-29", "9999-12-31"] {
            let date = try XCTUnwrap(PGDate(string: text))
            let row = try single(connection.query("SELECT \(date) AS d, \(date)::text AS t"))
            XCTAssertEqual(try row.decode("d", as: PGDate.self), date)
            XCTAssertEqual(try row.decode("t", as: String.self), text)
        }
        for value in [
            Double.infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -0.0, 1e-300, 123456.789,
        ] {
            let row = try single(connection.query("SELECT \(value) AS v"))
            XCTAssertEqual(try row.decode("v", as: Double.self), value)
        }
        let nan = try single(connection.query("SELECT \(Double.nan) AS v"))
        XCTAssertTrue(try nan.decode("v", as: Double.self).isNaN)
        let numeric = try single(connection.query("SELECT 12.50::numeric AS n"))
        XCTAssertEqual(try numeric.decode("n", as: Double.self), 12.5)
    }

    func testStringsAdoptTheColumnType() throws {
        // Strings are sent untyped, so they fill uuid columns and compare with ANY(uuid[]).
        let uuid = UUID()
        try connection.query("INSERT INTO everything (u, t) VALUES (\(uuid.uuidString), 'x')")
        let rows = try connection.query(
            """
            SELECT u FROM everything WHERE u = ANY(\
            \([uuid.uuidString.lowercased(), "00000000-0000-0000-0000-000000000000"]))
            """
        )
        XCTAssertEqual(try rows.map { try $0.decode("u", as: UUID.self) }, [uuid])
        let byText = try connection.query("SELECT t FROM everything WHERE t = ANY(\(["x", "y"]))")
        XCTAssertEqual(byText.count, 1)
        let byUUIDs = try connection.query("SELECT t FROM everything WHERE u = ANY(\([uuid]))")
        XCTAssertEqual(byUUIDs.count, 1)
        XCTAssertEqual(byUUIDs.columns, ["t"])
    }

    func testInjectionLookingStringsAreData() throws {
        let nasty = [
            "'; DROP TABLE everything; --",
            "Robert'); DROP TABLE everything;--",
            "$1", "$$ dollar $$", "\\'", "' OR '1'='1", "\"; SELECT 1; --", "/* comment */", "E'\\x41'",
        ]
        for value in nasty {
            let id = try single(
                connection.query("INSERT INTO everything (t, ta) VALUES (\(value), \([value])) RETURNING id")
            )
            .decode("id", as: Int.self)
            let row = try single(connection.query("SELECT t, ta FROM everything WHERE id = \(id) AND t = \(value)"))
            XCTAssertEqual(try row.decode("t", as: String.self), value)
            XCTAssertEqual(try row.decode("ta", as: [String].self), [value])
        }
        let count = try single(connection.query("SELECT count(*) AS n FROM everything")).decode("n", as: Int.self)
        XCTAssertEqual(count, nasty.count)
    }

    func testWrongTypeThrowsNamingTheColumn() throws {
        let row = try single(connection.query("SELECT 'not a number'::text AS title, 3 AS n"))
        let error = assertPGError { _ = try row.decode("title", as: Int.self) }
        XCTAssertEqual(error?.kind, .decoding)
        XCTAssertEqual(error?.column, "title")
        XCTAssertTrue(error?.description.contains("\"title\"") ?? false, error?.description ?? "")
        XCTAssertTrue(error?.description.contains("Int") ?? false)
        // The value itself stays out of the loggable description.
        XCTAssertFalse(error?.description.contains("not a number") ?? true)
        XCTAssertTrue(error?.debugDescription.contains("not a number") ?? false)

        XCTAssertEqual(assertPGError { _ = try row.decode("n", as: UUID.self) }?.column, "n")
        XCTAssertEqual(assertPGError { _ = try row.decode("n", as: Date.self) }?.column, "n")
        XCTAssertEqual(assertPGError { _ = try row.decode("n", as: Bool.self) }?.column, "n")
        XCTAssertEqual(assertPGError { _ = try row.decode("missing", as: Int.self) }?.column, "missing")
        XCTAssertEqual(assertPGError { _ = try row.decode(at: 9, as: Int.self) }?.kind, .decoding)
    }

    func testNulBytesAreRejectedNotTruncated() throws {
        let error = assertPGError { try connection.query("SELECT \("abc\u{0}def") AS t") }
        XCTAssertEqual(error?.kind, .invalidQuery)
        // In the SQL text itself too (libpq would send only "SELECT 1"), and in a bare command.
        XCTAssertEqual(
            assertPGError { try connection.query(PGQuery(unsafeSQL: "SELECT 1\u{0}; DROP TABLE everything")) }?.kind,
            .invalidQuery)
        XCTAssertEqual(assertPGError { try connection.execute(unsafeSQL: "SELECT 1\u{0}") }?.kind, .invalidQuery)
        // The connection is still usable.
        XCTAssertEqual(try single(connection.query("SELECT 1 AS one")).decode("one", as: Int.self), 1)
    }
}
