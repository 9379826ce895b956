import Foundation
import PGClient

/// A quote as the console's edit and delete pages show it: its version (for optimistic concurrency) and the days
/// that hold it, which say up front whether it may still change.
public struct EditableQuote: Sendable, Equatable {
    public let quote: Quote
    /// Changes whenever the row is written, by any door (the row's `xmin`).
    public let version: String
    /// Days that have shown it (it stays as shown, for good).
    public let shownOn: [PGDate]
    /// Coming days an owner pinned it to (it stays while pinned).
    public let pinnedTo: [PGDate]

    /// Why it cannot be changed or deleted now; nil when it can.
    public var frozenReason: String? {
        if let day = shownOn.last {
            return "This quote has been a quote of the day (\(day)), which stays as it was shown: it cannot be "
                + "changed or deleted. Add a new quote instead."
        }
        if let day = pinnedTo.first {
            return "This quote is pinned to \(day), a coming day: it cannot be changed or deleted while that pin "
                + "holds it. Unpin the day first."
        }
        return nil
    }

    static func load(_ id: UUID, lock: Bool, _ connection: PGConnection) throws -> EditableQuote? {
        guard
            let row = try connection.query(
                """
                SELECT \(unsafeSQL: Quote.columns()), quotes.xmin::text AS version FROM quotes WHERE id = \(id)
                \(unsafeSQL: lock ? "FOR UPDATE" : "")
                """
            ).first
        else { return nil }
        let lastShown = QuoteOfTheDay.lastFrozenDate()
        var shown: [PGDate] = [], pinned: [PGDate] = []
        for day in try connection.query(
            "SELECT date, pinned FROM quote_of_day WHERE quote_id = \(id) AND (pinned OR date <= \(lastShown)) ORDER BY date"
        ) {
            let date: PGDate = try day.decode("date")
            if date <= lastShown { shown.append(date) } else { pinned.append(date) }
        }
        return EditableQuote(
            quote: try Quote(row: row), version: try row.decode("version"), shownOn: shown, pinnedTo: pinned)
    }
}
