import Foundation
import PGClient

/// `Prefer: count=…` as PostgREST's `count=estimated`: rows are counted exactly up to `exactUpTo`, past it the
/// planner's estimate stands in (`count=planned` always takes the estimate), so a count never reads more than a
/// bounded number of rows, whatever the table holds.
enum RestCount: String {
    case exact, planned, estimated

    static let exactUpTo = 10_000

    init?(preferences: [String: String]) {
        guard let value = preferences["count"] else { return nil }
        self = RestCount(rawValue: value) ?? .exact
    }

    /// How many rows `matching` (`RestSQL.matching`) returns, and whether that is exact.
    func total(of matching: PGQuery, on connection: PGConnection) throws -> (rows: Int, exact: Bool) {
        if self != .planned {
            let capped: PGQuery =
                "SELECT count(*)::int8 AS total FROM (\(matching) LIMIT \(Self.exactUpTo + 1)) c"
            let counted = try connection.query(capped).first?.decode("total", as: Int.self) ?? 0
            if counted <= Self.exactUpTo { return (counted, true) }
        }
        let estimate = try Self.plannedRows(of: matching, on: connection)
        return (self == .planned ? estimate : max(estimate, Self.exactUpTo + 1), false)
    }

    /// The rows the planner expects `statement` to return (`EXPLAIN`, nothing is run).
    static func plannedRows(of statement: PGQuery, on connection: PGConnection) throws -> Int {
        let plan = try connection.query("EXPLAIN (FORMAT JSON) " + statement)
        guard let text = try plan.first?.decode("QUERY PLAN", as: String.self),
            let document = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]],
            let rows = (document.first?["Plan"] as? [String: Any])?["Plan Rows"] as? NSNumber
        else { return 0 }
        return rows.intValue
    }
}
