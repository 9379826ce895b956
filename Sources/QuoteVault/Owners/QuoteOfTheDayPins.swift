import Foundation
import PGClient

/// The console's view of the quote of the day: a month of stored choices, and pins of coming days.
///
/// A date is frozen once it has begun anywhere (`QuoteOfTheDay.isFrozen`); a pin or an unpin of a frozen date is
/// refused and saves nothing. A pin replaces a coming day's stored choice (a client may have fetched it ahead,
/// which is why such answers are cached only briefly); an unpin removes the pin, and the day's quote is chosen
/// again, by the date's seed, when it is first asked for.
public struct QuoteOfTheDayPins: Sendable {
    /// One day of the calendar.
    public struct Day: Sendable, Equatable {
        public let date: PGDate
        /// The day's quote (chosen by its seed, or pinned); nil beyond the dates `/v1/qotd` serves.
        public let quote: Quote?
        public let pinned: Bool
    }

    private let pool: PGPool
    /// Chooses the quote of a day nobody asked for yet, as `/v1/qotd` would.
    private let quoteOfTheDay: QuoteOfTheDay

    public init(pool: PGPool) {
        self.pool = pool
        quoteOfTheDay = QuoteOfTheDay(pool: pool)
    }

    /// Every day of `month` (1-12) of `year` that `/v1/qotd` serves, by date: a day without a stored quote gets
    /// it chosen now, by its seed, exactly as the first client asking for it would.
    public func month(year: Int, month: Int) async throws -> [PGDate: Day] {
        guard let first = PGDate(year: year, month: month, day: 1),
            let next = PGDate(year: year + month / 12, month: month % 12 + 1, day: 1)
        else { throw QuoteVaultError.notFound }
        let rows = try await pool.query(
            """
            SELECT d.date, d.pinned, \(unsafeSQL: Quote.columns()) FROM quote_of_day d
            JOIN quotes ON quotes.id = d.quote_id
            WHERE d.date >= \(first) AND d.date < \(next)
            """)
        var days: [PGDate: Day] = [:]
        for row in rows {
            let date: PGDate = try row.decode("date")
            days[date] = Day(date: date, quote: try Quote(row: row), pinned: try row.decode("pinned"))
        }
        let last = PGDate(Date()).adding(days: QuoteOfTheDay.maximumDaysAhead)
        var date = first
        while date < next, date <= last {
            if days[date] == nil, date >= QuoteOfTheDay.firstDate {
                days[date] = Day(date: date, quote: try await quoteOfTheDay.quote(for: date), pinned: false)
            }
            date = date.adding(days: 1)
        }
        return days
    }

    /// One day: its stored quote, or the one its seed chooses now (as in `month`).
    public func day(_ date: PGDate) async throws -> Day {
        if let stored = try await pool.query(
            """
            SELECT d.pinned, \(unsafeSQL: Quote.columns()) FROM quote_of_day d
            JOIN quotes ON quotes.id = d.quote_id WHERE d.date = \(date)
            """
        ).first {
            return Day(date: date, quote: try Quote(row: stored), pinned: try stored.decode("pinned"))
        }
        let served =
            date >= QuoteOfTheDay.firstDate
            && date.dayNumber - PGDate(Date()).dayNumber <= QuoteOfTheDay.maximumDaysAhead
        return Day(date: date, quote: served ? try await quoteOfTheDay.quote(for: date) : nil, pinned: false)
    }

    /// Pins `quoteID` to `date`, in one transaction with its audit row. The contract's promise holds for pins too:
    /// while the corpus has at least 365 quotes, no quote is the quote of the day twice within 365 days.
    /// - Throws: `QuoteVaultError.validation` (nothing saved) for a frozen date, a date too far ahead, an unknown
    ///   quote, or a quote that is another day's quote within 364 days.
    public func pin(_ quoteID: UUID, to date: PGDate, by actor: AuditActor, now: Date = Date()) async throws {
        try Self.refuseFrozen(date, now: now)
        let today = PGDate(now)
        guard date.dayNumber - today.dayNumber <= QuoteOfTheDay.maximumDaysAhead else {
            throw QuoteVaultError.invalid("date", "must be at most \(QuoteOfTheDay.maximumDaysAhead) days ahead")
        }
        try await pool.withTransaction { connection in
            guard
                let quote = try connection.query(
                    """
                    SELECT \(unsafeSQL: Quote.columns()) FROM quotes WHERE id = \(quoteID)
                    """
                ).first.map(Quote.init(row:))
            else { throw QuoteVaultError.invalid("quote", "there is no quote with this id") }
            // The lock of the seed's choices: no concurrent choice picks this quote for a nearby day meanwhile.
            try connection.query("SELECT pg_advisory_xact_lock(\(QuoteOfTheDay.choiceLockKey))")
            try Self.refuseRepeat(quoteID, on: date, connection)
            let before = try connection.query(
                """
                SELECT quote_id, pinned FROM quote_of_day WHERE date = \(date) FOR UPDATE
                """
            ).first
            try connection.query(
                """
                INSERT INTO quote_of_day (date, quote_id, pinned) VALUES (\(date), \(quoteID), true)
                ON CONFLICT (date) DO UPDATE SET quote_id = EXCLUDED.quote_id, pinned = true, created_at = now()
                """)
            try AuditLog.record(
                actor, action: "qotd.pin", target: date.description,
                before: try before.map { row in
                    [
                        "quote_id": try row.decode("quote_id", as: UUID.self).uuidString.lowercased(),
                        "pinned": String(try row.decode("pinned", as: Bool.self)),
                    ]
                },
                after: ["quote_id": quote.id.uuidString.lowercased(), "text": quote.text, "author": quote.author],
                connection)
        }
    }

    /// Removes the pin of `date`, in one transaction with its audit row.
    /// - Throws: `QuoteVaultError.validation` for a frozen date or a day without a pin.
    public func unpin(_ date: PGDate, by actor: AuditActor, now: Date = Date()) async throws {
        try Self.refuseFrozen(date, now: now)
        try await pool.withTransaction { connection in
            guard
                let row = try connection.query(
                    """
                    DELETE FROM quote_of_day WHERE date = \(date) AND pinned RETURNING quote_id
                    """
                ).first
            else { throw QuoteVaultError.invalid("date", "this day has no pinned quote") }
            try AuditLog.record(
                actor, action: "qotd.unpin", target: date.description,
                before: ["quote_id": try row.decode("quote_id", as: UUID.self).uuidString.lowercased()], connection)
        }
    }

    private static func refuseRepeat(_ quoteID: UUID, on date: PGDate, _ connection: PGConnection) throws {
        let row = try connection.query(
            """
            SELECT (SELECT count(*) >= 365 FROM quotes) AS large,
                   (SELECT min(d.date) FROM quote_of_day d WHERE d.quote_id = \(quoteID) AND d.date <> \(date)
                    AND d.date BETWEEN \(date)::date - 364 AND \(date)::date + 364) AS other
            """)[0]
        guard try row.decode("large", as: Bool.self), let other = try row.decode("other", as: PGDate?.self) else {
            return
        }
        throw QuoteVaultError.invalid(
            "quote",
            "this quote is the quote of the day on \(other), and no quote is the "
                + "quote of the day twice within 365 days; pick another")
    }

    private static func refuseFrozen(_ date: PGDate, now: Date) throws {
        guard !QuoteOfTheDay.isFrozen(date, now: now) else {
            throw QuoteVaultError.invalid(
                "date",
                "\(date) has already begun somewhere in the world, so its quote "
                    + "of the day is frozen; pick a day after \(QuoteOfTheDay.lastFrozenDate(now: now))")
        }
    }
}
