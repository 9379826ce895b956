import Foundation

/// A `timestamptz` to the exact microsecond PostgreSQL stores: for values that must round-trip without the rounding
/// of `Date` (a `Double` of seconds), such as a keyset cursor's position.
///
/// Reading it costs the database nothing: asking PostgreSQL for `extract(epoch …) * 1000000` instead made a page of
/// quotes do numeric arithmetic on every row. Sent as a parameter it is a plain `timestamptz`, not
/// `timestamptz 'epoch' + $1 * interval '1 microsecond'`, which PostgreSQL evaluated on every run (a page after a
/// cursor was slower that way under pgbench).
public struct PGTimestamp: Sendable, Hashable, Comparable {
    /// Microseconds since 1970-01-01 00:00:00 UTC.
    public let microsecondsSince1970: Int64

    public init(microsecondsSince1970: Int64) {
        self.microsecondsSince1970 = microsecondsSince1970
    }

    /// The nearest `Date`. One exact integer, one correctly rounded division: a moment stored with millisecond
    /// precision comes back bit-identical to `Date(timeIntervalSince1970: ms / 1000)`.
    public var date: Date { Date(timeIntervalSince1970: Double(microsecondsSince1970) / 1_000_000) }

    public static func < (lhs: PGTimestamp, rhs: PGTimestamp) -> Bool {
        lhs.microsecondsSince1970 < rhs.microsecondsSince1970
    }
}

extension PGTimestamp: PGDecodable {
    /// Throws for PostgreSQL's `infinity` and `-infinity`, which have no position in microseconds, and for BC dates.
    public init(pgText text: String) throws(PGError) {
        var text = text
        guard let micros = text.withUTF8(parseISOTimestamp) else { throw .decodingFailure(PGTimestamp.self, text) }
        microsecondsSince1970 = micros
    }
}

extension PGTimestamp: PGEncodable {
    public static var pgType: PGType { .timestamptz }

    /// PostgreSQL's binary `timestamptz`: microseconds since 2000-01-01 00:00:00 UTC, a big-endian 64-bit integer.
    /// Exact for every moment PostgreSQL can store, and nothing for the database to parse.
    public func pgEncode() -> PGBind.Value {
        let sincePostgresEpoch = microsecondsSince1970 - Self.postgresEpochMicroseconds
        return .binary(withUnsafeBytes(of: sincePostgresEpoch.bigEndian) { Array($0) })
    }

    /// 2000-01-01 00:00:00 UTC, in microseconds since 1970.
    private static let postgresEpochMicroseconds: Int64 = 946_684_800_000_000
}
