import Foundation
import PGClient
import QuoteVault

/// The quote of the day: a month calendar of stored and pinned quotes, and a day's page to pin a quote to a
/// coming day (by id, or picked from a search) or unpin it. Frozen days (begun somewhere) say so and save nothing.
enum QuoteOfTheDayPages {
    static func calendar(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let today = PGDate(Date())
        let thisMonth = PGDate(year: today.year, month: today.month, day: 1)!
        // Months from 2000 (the first date served) to a year ahead (the furthest date that can be pinned).
        var month = request.query("month").flatMap { PGDate(string: $0 + "-01") } ?? thisMonth
        if month < QuoteOfTheDay.firstDate || month.year > today.year + 1 { month = thisMonth }
        let days = try await request.context.pins.month(year: month.year, month: month.month)
        let lastFrozen = QuoteOfTheDay.lastFrozenDate()
        let previous = month.adding(days: -1), next = month.adding(days: 32)
        var cells: [HTML] = []
        // Monday first; blank cells before the 1st (hidden on narrow screens, where days are a list).
        let weekday = (month.dayNumber + 3) % 7
        for _ in 0..<weekday { cells.append("<li class=\"day blank\" aria-hidden=\"true\"></li>") }
        var date = month
        while date.month == month.month {
            cells.append(cell(date, days[date], today: today, lastFrozen: lastFrozen))
            date = date.adding(days: 1)
        }
        let heads: [HTML] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { "<li>\($0)</li>" }
        return .page(
            title: "Quote of the day",
            body: """
                <nav class="pager month-nav" aria-label="Months">
                <a class="button secondary"
                href="/console/qotd?month=\(monthText(previous))">← \(monthName(previous))</a>
                <strong>\(monthName(month))</strong>
                <a class="button secondary"
                href="/console/qotd?month=\(monthText(next))">\(monthName(next)) →</a></nav>
                <p class="muted">Days up to \(lastFrozen.description) have begun somewhere in the world (UTC+14) and are
                frozen. Open a later day to pin a quote to it; a coming day without a pin shows the quote its date's
                seed chose.</p>
                <ul class="weekdays" aria-hidden="true">\(heads)</ul>
                <ol class="calendar">\(cells)</ol>
                """)
    }

    private static func cell(_ date: PGDate, _ day: QuoteOfTheDayPins.Day?, today: PGDate, lastFrozen: PGDate)
        -> HTML
    {
        let frozen = date <= lastFrozen
        var classes = "day"
        if frozen { classes += " frozen" }
        if date == today { classes += " today" }
        if day?.pinned == true { classes += " pinned" }
        let badge: HTML =
            day?.pinned == true
            ? " <span class=\"badge\">pinned</span>"
            : frozen ? " <span class=\"badge muted\">frozen</span>" : .empty
        // Long quotes are cut in the grid; the day's page shows the whole text.
        let quote: HTML =
            day?.quote.map {
                let text = $0.text.count > 90 ? String($0.text.prefix(88)) + "…" : $0.text
                return "<q>\(text)</q> <span class=\"muted\">— \($0.author)</span>"
            }
            ?? "<span class=\"muted\">beyond the served dates</span>"
        return """
            <li class="\(classes)"><a href="/console/qotd/\(date.description)">\(date.description)</a>\(badge)
            <div>\(quote)</div></li>
            """
    }

    static func day(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        try await dayPage(request, date: try date(request), message: nil, status: 200)
    }

    static func pin(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let date = try date(request)
        guard let id = request.form["quote_id"].flatMap({ UUID(uuidString: $0.trimmingCharacters(in: .whitespaces)) })
        else {
            return try await dayPage(
                request, date: date,
                message: "Enter the id of a quote (or pick one from a "
                    + "search). Nothing was saved.", status: 422)
        }
        do {
            try await request.context.pins.pin(id, to: date, by: request.actor)
        } catch QuoteVaultError.validation(let errors) {
            return try await dayPage(request, date: date, message: refusal(errors), status: 422)
        }
        return .redirect("/console/qotd/\(date.description)?done=pinned")
    }

    static func unpin(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let date = try date(request)
        do {
            try await request.context.pins.unpin(date, by: request.actor)
        } catch QuoteVaultError.validation(let errors) {
            return try await dayPage(request, date: date, message: refusal(errors), status: 422)
        }
        return .redirect("/console/qotd/\(date.description)?done=unpinned")
    }

    /// The notice after a pin or an unpin: fixed codes in `?done=`, never text from the URL.
    private static func notice(_ request: ConsoleRequest) -> HTML {
        switch request.query("done") {
        case "pinned": "<p class=\"notice\" role=\"status\">Pinned: this day shows the quote below.</p>"
        case "unpinned":
            "<p class=\"notice\" role=\"status\">Unpinned: this day shows the quote the daily choice gives it.</p>"
        default: .empty
        }
    }

    /// Links to the day before (not before the first served date) and the day after.
    private static func neighbours(_ date: PGDate) -> HTML {
        let previous = date.adding(days: -1), next = date.adding(days: 1)
        let back: HTML =
            previous >= QuoteOfTheDay.firstDate
            ? "<a href=\"/console/qotd/\(previous.description)\" rel=\"prev\">← \(previous.description)</a> · " : .empty
        return """
            <nav class="pager">\(back)<a href="/console/qotd?month=\(monthText(date))">\(monthName(date))</a> ·
            <a href="/console/qotd/\(next.description)" rel="next">\(next.description) →</a></nav>
            """
    }

    private static func refusal(_ errors: [FieldError]) -> String {
        let text = errors.map(\.message).joined(separator: "; ")
        return text.prefix(1).uppercased() + text.dropFirst() + ". Nothing was saved."
    }

    private static func dayPage(_ request: ConsoleRequest, date: PGDate, message: String?, status: Int) async throws
        -> ConsoleAnswer
    {
        let stored: QuoteOfTheDayPins.Day? = try await request.context.pins.day(date)
        let frozen = QuoteOfTheDay.isFrozen(date)
        let error: HTML = message.map { "<p class=\"error\" role=\"alert\">\($0)</p>" } ?? .empty
        let current: HTML =
            stored?.quote.map { quote in
                """
                <blockquote class="card"><p>\(quote.text)</p><footer>— \(quote.author) · \(quote.category) ·
                <code>\(quote.id.uuidString.lowercased())</code></footer></blockquote>
                """
            } ?? "<p class=\"muted\">No quote: this date is beyond the dates /v1/qotd serves.</p>"
        var actions: HTML
        if frozen {
            actions = """
                <p class="notice">This day has begun somewhere in the world, so its quote of the day is frozen: it
                cannot be pinned or unpinned.</p>
                """
        } else {
            actions = try await pinForms(request, date: date, pinned: stored?.pinned == true)
        }
        return .page(
            title: "Quote of the day · \(date.description)",
            body: """
                \(neighbours(date))
                \(notice(request))\(error)<h2>\(stored?.pinned == true ? "Pinned quote" : "Quote")</h2>\(current)\(actions)
                """, status: status)
    }

    private static func pinForms(_ request: ConsoleRequest, date: PGDate, pinned: Bool) async throws -> HTML {
        let path = "/console/qotd/\(date.description)"
        let unpin: HTML =
            pinned
            ? """
            <form class="inline" method="post" action="\(path)/unpin">\(request.csrfField)
            <button class="danger" type="submit">Unpin</button></form>
            """ : .empty
        var results: HTML = .empty
        if let text = request.query("q"), !text.trimmingCharacters(in: .whitespaces).isEmpty {
            let found: [Quote]
            do {
                found = try await request.context.search.search(
                    try SearchQuery(text), in: .keyword, category: nil,
                    page: PageRequest.parse(page: "1", pageSize: "10", cursor: nil)
                ).items
            } catch QuoteVaultError.validation(let errors) {
                return "<p class=\"error\">\(refusal(errors))</p>"
            }
            let rows = found.map { quote -> HTML in
                """
                <tr><td>\(quote.text)</td><td>\(quote.author)</td><td class="actions">\
                <form method="post" action="\(path)/pin">\(request.csrfField)\
                <input type="hidden" name="quote_id" value="\(quote.id.uuidString.lowercased())">\
                <button type="submit">Pin this</button></form></td></tr>
                """
            }
            results =
                found.isEmpty
                ? "<p class=\"muted\">No quote contains that text.</p>"
                : """
                <table class="cards"><thead><tr><th>Text</th><th>Author</th><th></th></tr></thead>
                <tbody>\(rows)</tbody></table>
                """
        }
        return """
            \(unpin)<h2>Pin a quote to this day</h2>
            <form class="inline" method="get" action="\(path)"><label>Search quotes
            <input name="q" value="\(request.query("q") ?? "")" maxlength="200"></label>
            <button class="secondary" type="submit">Search</button></form>\(results)
            <form class="inline" method="post" action="\(path)/pin">\(request.csrfField)
            <label>Quote id <input name="quote_id" required size="36"></label>
            <button type="submit">Pin</button></form>
            """
    }

    private static func date(_ request: ConsoleRequest) throws -> PGDate {
        let text = request.http.pathParameter("date")
        guard text.utf8.count == 10, let date = PGDate(string: text), date >= QuoteOfTheDay.firstDate else {
            throw Failure.notFound
        }
        return date
    }

    private static func monthText(_ date: PGDate) -> String { String(date.description.prefix(7)) }

    private static func monthName(_ date: PGDate) -> String {
        let names = [
            "January", "February", "March", "April", "May", "June", "July", "August", "September",
            "October", "November", "December",
        ]
        return "\(names[date.month - 1]) \(date.year)"
    }
}
