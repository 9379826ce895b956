import AuthJWT
import Foundation
import PGClient

/// The quote of a date: chosen once (deterministically from the date), stored, and the same forever after,
/// for every client and every server instance.
///
/// The database decides: the first choice for a date is inserted with `ON CONFLICT DO NOTHING` and then
/// read back, so concurrent first requests (and instances) agree. Choices are made under a transaction-level
/// advisory lock so that two dates chosen at once never pick the same quote; a quote is not chosen if it is
/// the quote of any date less than 365 days away, while the corpus allows.
public final class QuoteOfTheDay: Sendable {
    /// The earliest date served.
    public static let firstDate = PGDate(year: 2000, month: 1, day: 1)!
    /// How far ahead of today a date may be.
    public static let maximumDaysAhead = 366
    /// Most dates a range request may span.
    public static let maximumRange = 31

    private let pool: PGPool
    /// Where stored choices are looked up first (a replica may be used); choosing always happens on `pool`.
    private let readPool: PGPool
    private let cache = DateCache<Quote>(capacity: 800)

    public init(pool: PGPool, readPool: PGPool? = nil) {
        self.pool = pool
        self.readPool = readPool ?? pool
    }

    /// The quote of `date`, choosing and storing it on first use.
    public func quote(for date: PGDate) async throws -> Quote {
        if let cached = cache[date] { return cached }
        if readPool !== pool, let stored = try await readPool.withConnection({ try Self.stored(date, $0) }) {
            if Self.isFrozen(date) { cache[date] = stored }
            return stored
        }
        // Not stored yet, or not yet replayed by the replica: the primary decides.
        let quote = try await pool.withTransaction { connection in
            if let stored = try Self.stored(date, connection) { return stored }
            try connection.query("SELECT pg_advisory_xact_lock(\(Self.choiceLockKey))")
            try Self.choose(date, connection)
            guard let chosen = try Self.stored(date, connection) else { throw QuoteVaultError.notFound }
            return chosen
        }
        if Self.isFrozen(date) { cache[date] = quote }
        return quote
    }

    /// The already-chosen quote of `date`, from memory only (the hot path); nil when not cached.
    public func cachedQuote(for date: PGDate) -> Quote? { cache[date] }

    static let choiceLockKey: Int64 = 0x5156_514F_5444

    private static func stored(_ date: PGDate, _ connection: PGConnection) throws -> Quote? {
        try connection.query(
            """
            SELECT \(unsafeSQL: Quote.columns()) FROM quote_of_day d JOIN quotes ON quotes.id = d.quote_id
            WHERE d.date = \(date)
            """
        ).first.map(Quote.init(row:))
    }

    /// Picks the first quote, in id order, at or after a point derived from the date (wrapping around to the
    /// first id), that is not the quote of a date less than 365 days away: the same choice for the same date and
    /// corpus, spread over the corpus (ids are random, so each quote is picked with a chance proportional to the gap
    /// of ids before it). An index walk that stops at the first quote allowed, so a date costs the same at any
    /// size; ordering every quote by a hash of the date grew with the corpus, and a range of new dates made one
    /// such choice per date (bench/README.md, "Session 41: the quote of the day").
    private static func choose(_ date: PGDate, _ connection: PGConnection) throws {
        guard try connection.query(choice(for: date)).affectedRows == 0 else { return }
        // Every quote was used within a year (a corpus under 365 quotes, so the sort is small): repeat the least
        // recently used.
        try connection.query(
            """
            INSERT INTO quote_of_day (date, quote_id, pinned)
            SELECT \(date), q.id, false FROM quotes q
            ORDER BY (SELECT min(abs(d.date - \(date)::date)) FROM quote_of_day d WHERE d.quote_id = q.id)
                         DESC NULLS FIRST,
                     q.id >= \(startingPoint(date)) DESC, q.id
            LIMIT 1
            ON CONFLICT (date) DO NOTHING
            """)
    }

    /// The statement of `choose`'s walk: inserts `date`'s quote unless no quote is allowed.
    static func choice(for date: PGDate) -> PGQuery {
        let point = startingPoint(date)
        return
            """
            INSERT INTO quote_of_day (date, quote_id, pinned)
            SELECT \(date), first.id, false FROM (
                (SELECT q.id FROM quotes q WHERE q.id >= \(point) AND NOT \(usedNearby(date))
                 ORDER BY q.id LIMIT 1)
                UNION ALL
                (SELECT q.id FROM quotes q WHERE q.id < \(point) AND NOT \(usedNearby(date))
                 ORDER BY q.id LIMIT 1)
                LIMIT 1) AS first
            ON CONFLICT (date) DO NOTHING
            """
    }

    /// `q` is the quote of a date less than 365 days from `date`.
    private static func usedNearby(_ date: PGDate) -> PGQuery {
        """
        EXISTS (SELECT 1 FROM quote_of_day d
                WHERE d.quote_id = q.id AND d.date BETWEEN \(date)::date - 364 AND \(date)::date + 364)
        """
    }

    /// Where a date's walk over the ids starts: the first 16 bytes of a hash of the date, as a UUID.
    static func startingPoint(_ date: PGDate) -> UUID {
        let hash = Digest.sha256(Array("quote-of-the-day:\(date)".utf8))
        return UUID(
            uuid: (
                hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7], hash[8], hash[9], hash[10],
                hash[11], hash[12], hash[13], hash[14], hash[15]
            ))
    }

    /// Whether `date` can no longer change: it has begun somewhere on Earth (the earliest zone is UTC+14), so some
    /// client may have been shown it as today. Later dates may still be pinned in the console, so they are never
    /// kept in memory (every instance reads them from the database) nor sent as immutable.
    public static func isFrozen(_ date: PGDate, now: Date = Date()) -> Bool {
        date.dayNumber <= lastFrozenDayNumber(now: now)
    }

    /// The last frozen date: today in UTC+14.
    public static func lastFrozenDate(now: Date = Date()) -> PGDate {
        PGDate(Date(timeIntervalSince1970: Double(lastFrozenDayNumber(now: now)) * 86_400))
    }

    private static func lastFrozenDayNumber(now: Date) -> Int {
        Int(((now.timeIntervalSince1970 + 14 * 3600) / 86_400).rounded(.down))
    }

    /// Today in `timeZone`.
    public static func today(in timeZone: TimeZone, now: Date = Date()) -> PGDate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        return PGDate(year: parts.year!, month: parts.month!, day: parts.day!)!
    }

    /// Seconds until `date` ends in `timeZone` (how long a client may cache today's answer).
    public static func secondsUntilEnd(of date: PGDate, in timeZone: TimeZone, now: Date = Date()) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let start = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day)),
            let end = calendar.date(byAdding: .day, value: 1, to: start)
        else { return 60 }
        return max(1, Int(end.timeIntervalSince(now).rounded(.up)))
    }

    /// Checks a client's date: not before 2000-01-01, not more than 366 days after today.
    public static func validate(_ date: PGDate, field: String, today: PGDate) throws {
        guard date >= firstDate else { throw QuoteVaultError.invalid(field, "must be on or after 2000-01-01") }
        guard date.dayNumber - today.dayNumber <= maximumDaysAhead else {
            throw QuoteVaultError.invalid(field, "must be at most \(maximumDaysAhead) days after today")
        }
    }
}
