import Foundation

/// A `timestamptz` read exactly, to the microsecond PostgreSQL stores: for values that must round-trip without the
/// rounding of `Date` (a `Double` of seconds), such as a keyset cursor's position. Decoding only; send a position back
/// as integer microseconds (`timestamptz 'epoch' + $1 * interval '1 microsecond'`).
///
/// Reading it costs the database nothing: asking PostgreSQL for `extract(epoch …) * 1000000` instead cost a page of
/// quotes a tenth of its database time (numeric arithmetic on every row).
public struct PGTimestamp: Sendable, Hashable, Comparable, PGDecodable {
    /// Microseconds since 1970-01-01 00:00:00 UTC.
    public let microsecondsSince1970: Int64

    public init(microsecondsSince1970: Int64) {
        self.microsecondsSince1970 = microsecondsSince1970
    }

    /// The nearest `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(microsecondsSince1970) / 1_000_000) }

    /// Throws for PostgreSQL's `infinity` and `-infinity`, which have no position in microseconds.
    public init(pgText text: String) throws(PGError) {
        var text = text
        guard let micros = text.withUTF8(parseISOTimestamp) else { throw .decodingFailure(PGTimestamp.self, text) }
        microsecondsSince1970 = micros
    }

    public static func < (lhs: PGTimestamp, rhs: PGTimestamp) -> Bool {
        lhs.microsecondsSince1970 < rhs.microsecondsSince1970
    }
}
