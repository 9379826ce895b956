import Foundation
import HTTPServer
import PGClient
import QuoteVault
import Synchronization

/// `/v1/qotd` and `/v1/qotd/range`. A date's quote never changes once chosen, so answers for recent dates
/// come from memory on the event thread; only a first request for a date reaches the database.
struct QuoteOfTheDayRoutes {
    let quoteOfTheDay: QuoteOfTheDay
    private let timeZones = TimeZoneCache()
    /// A date's answer as sent: it never changes once the date's quote is chosen, so it is encoded (and tagged) once.
    private let bodies = DateCache<PreparedBody>(capacity: 64)

    init(quoteOfTheDay: QuoteOfTheDay) { self.quoteOfTheDay = quoteOfTheDay }

    /// The requested date: `date` if given, else today in `tz` (an IANA zone, default UTC).
    private struct Target {
        let date: PGDate
        /// True when the client named the date: its answer is then immutable.
        let explicit: Bool
        let timeZone: TimeZone
        /// When today ends in `timeZone` (for today's answer).
        let endsAt: Date?
    }

    private func target(_ request: Request) throws -> Target {
        let zoneName = request.queryValue("tz") ?? "UTC"
        guard let zone = timeZones.zone(named: zoneName) else {
            throw QuoteVaultError.invalid("tz", "must be an IANA time zone name such as Europe/Paris")
        }
        let timeZone = zone.timeZone
        let today = zone.today()
        guard let text = request.queryValue("date") else {
            return Target(date: today.date, explicit: false, timeZone: timeZone, endsAt: today.endsAt)
        }
        let date = try Self.parseDate(text, field: "date")
        try QuoteOfTheDay.validate(date, field: "date", today: today.date)
        return Target(date: date, explicit: true, timeZone: timeZone, endsAt: nil)
    }

    /// The caching of a date that may still be pinned.
    static let unfrozenCacheControl = "public, max-age=60"

    static func parseDate(_ text: String, field: String) throws -> PGDate {
        guard text.utf8.count == 10, let date = PGDate(string: text) else {
            throw QuoteVaultError.invalid(field, "must be a date in the form YYYY-MM-DD")
        }
        return date
    }

    @Sendable func cached(_ request: Request) throws -> Response? {
        let target = try target(request)
        return quoteOfTheDay.cachedQuote(for: target.date).map { respond(target, $0) }
    }

    @Sendable func single(_ request: Request) async throws -> Response {
        let target = try target(request)
        return respond(target, try await quoteOfTheDay.quote(for: target.date))
    }

    private func respond(_ target: Target, _ quote: Quote) -> Response {
        // A coming date that has not begun anywhere may still be pinned in the console: never kept, briefly cached.
        let frozen = QuoteOfTheDay.isFrozen(target.date)
        let body =
            (frozen ? bodies[target.date] : nil)
            ?? {
                var writer = JSONWriter(capacity: 512)
                Self.write(target.date, quote, to: &writer)
                let body = PreparedBody(writer.bytes)
                if frozen { bodies[target.date] = body }
                return body
            }()
        // Today's answer holds until the date changes in the client's zone; a named date's never changes.
        let maxAge =
            !frozen
            ? Self.unfrozenCacheControl
            : target.explicit
                ? "public, max-age=31536000, immutable"
                : "public, max-age=\(max(1, Int((target.endsAt ?? Date()).timeIntervalSinceNow.rounded(.up))))"
        return .json(prepared: body, headers: ["Cache-Control": maxAge])
    }

    private static func write(_ date: PGDate, _ quote: Quote, to writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("date"); writer.string(date.description); writer.comma()
        writer.key("quote"); writer.quote(quote)
        writer.raw("}")
    }

    @Sendable func range(_ request: Request) async throws -> Response {
        var errors: [FieldError] = []
        var bounds: [PGDate] = []
        let today = QuoteOfTheDay.today(in: TimeZone(identifier: "UTC")!)
        for field in ["from", "to"] {
            try errors.collect {
                guard let text = request.queryValue(field) else { throw QuoteVaultError.invalid(field, "is required") }
                let date = try Self.parseDate(text, field: field)
                try QuoteOfTheDay.validate(date, field: field, today: today)
                bounds.append(date)
            }
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        let (from, to) = (bounds[0], bounds[1])
        guard from <= to else { throw QuoteVaultError.invalid("to", "must not be before from") }
        let days = to.dayNumber - from.dayNumber + 1
        guard days <= QuoteOfTheDay.maximumRange else {
            throw QuoteVaultError.invalid("to", "the range may span at most \(QuoteOfTheDay.maximumRange) dates")
        }
        var writer = JSONWriter(capacity: 512 * days)
        writer.raw("{")
        writer.key("items")
        writer.raw("[")
        for offset in 0..<days {
            let date = from.adding(days: offset)
            if offset > 0 { writer.comma() }
            Self.write(date, try await quoteOfTheDay.quote(for: date), to: &writer)
        }
        writer.raw("]}")
        let cacheControl =
            QuoteOfTheDay.isFrozen(to)
            ? "public, max-age=31536000, immutable" : Self.unfrozenCacheControl
        return Response.json(bytes: writer.bytes, headers: ["Cache-Control": cacheControl])
            .taggedWithETag()
    }
}

/// A time zone with its current date remembered until that date ends: calendar arithmetic is slow,
/// and the quote of the day's hot path needs "today" for every request.
private final class Zone: Sendable {
    let timeZone: TimeZone
    private let current = Mutex<(date: PGDate, endsAt: Date)?>(nil)

    init(_ timeZone: TimeZone) { self.timeZone = timeZone }

    func today() -> (date: PGDate, endsAt: Date) {
        let now = Date()
        if let current = current.withLock({ $0 }), now < current.endsAt { return current }
        let date = QuoteOfTheDay.today(in: timeZone, now: now)
        let endsAt = now.addingTimeInterval(Double(QuoteOfTheDay.secondsUntilEnd(of: date, in: timeZone, now: now)))
        current.withLock { $0 = (date, endsAt) }
        return (date, endsAt)
    }
}

/// `TimeZone(identifier:)` reads the zone database; remember what was asked before.
private final class TimeZoneCache: Sendable {
    private let zones = Mutex<[String: Zone?]>([:])

    func zone(named name: String) -> Zone? {
        if let known = zones.withLock({ $0[name] }) { return known }
        guard name.utf8.count <= 64 else { return nil }
        let zone = TimeZone(identifier: name).map(Zone.init)
        zones.withLock { zones in if zones.count < 1000 { zones[name] = zone } }
        return zone
    }
}
