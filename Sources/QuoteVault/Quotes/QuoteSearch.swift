import Foundation
import PGClient
import Synchronization

/// What a search matches: the quote's text or its author.
public enum SearchField: String, Sendable {
    case keyword, author

    var column: String { self == .keyword ? "text" : "author" }
}

/// Literal, case-insensitive substring search over text or author. The design, the indexes and the measured costs
/// are described in docs/search.md; the SQL functions are in schema/ (the PostgreSQL schema `search`).
///
/// Every result contains the query (`ILIKE` with `%`, `_` and `\` escaped, so they match themselves). Ranking: the
/// query as a whole word first, then as the start of a word, then anywhere; ties newest first.
///
/// The cost does not grow with the number of matches.
/// - A query is first answered from the index of words (`quote_vocabulary` and the word indexes of `quotes`,
///   migrations 0013-0016): for each run of word characters of the query, the words of the vocabulary that can
///   hold it, then the quotes holding them, without reading a text. With at most 1,000 matches (and 5,000
///   candidates) that is the answer, ranked in full with an exact `total`. A text query of several words takes
///   its candidates from its pairs of adjacent words instead (`quotes_text_pairs_idx`, migration 0048), so two
///   common words rarely together read about their matches only. An author query of several words, each in many
///   quotes, is counted and paged through the names of authors (`quote_authors`, `quotes_by_author_idx`,
///   migration 0060): the total from the index alone, the page newest first. The SQL decides what a word is and
///   holds the thresholds (`quote_search_limit`).
/// - Otherwise a query with at most 1,000 matches is answered from those matches (found by the trigram indexes, or
///   for a text query of several words by its pairs of adjacent words; at most 1,001 read), ranked in full, with
///   an exact `total`.
/// - A query with more is answered by `search.quote_search_walk_text`/`_author` (schema/50_walk.sql), which reads
///   the rank tiers in order and stops after the rows the page needs: a one-word query's newest quotes, and a
///   several-word query's through its rarest word, come from the window of ordered words (`quote_words_newest`),
///   older ones from the word indexes span of time by span, newest first; a tier with many walks the newest-first
///   index, where the more matches, the shorter the walk. Its `total` is 1,000 with `totalIsExact` false, as the
///   contract allows.
/// Which queries have more than 1,000 matches is remembered per version of the quotes (`quotes_version`), so the
/// bounded count is paid once per query until quotes change. So is the exact total of a query whose page from the
/// index of words was the walk's (`walked`, migration 0055: one word with many candidates), so at the same version
/// the page alone is read.
public struct QuoteSearch: Sendable {
    private let pool: PGPool
    private let manyMatches = ManyMatchesMemory()

    public init(pool: PGPool) { self.pool = pool }

    /// Up to this many matches `total` is exact; beyond, it is this number and `totalIsExact` is false.
    public static let exactTotalLimit = 1_000

    public func search(_ searchQuery: SearchQuery, in field: SearchField, category: QuoteCategory?, page: PageRequest)
        async throws -> Page<Quote>
    {
        let query = searchQuery.text
        let patterns = Patterns(query)
        let key = ManyMatchesMemory.Key(field: field, category: category, query: query)
        if let known = manyMatches.known(key) {
            let walked = try await walk(patterns, field: field, category: category, page: page, total: known.total)
            // Read at another version, the query may have other matches now: count again.
            if walked.version == known.version { return walked.page }
        }
        if let words = try await fromWords(patterns, field: field, category: category, page: page) {
            guard words.total > Self.exactTotalLimit else {
                if words.walked { manyMatches.remember(key, total: words.total, version: words.version) }
                return words.page
            }
            manyMatches.remember(key, total: words.total, version: words.version)
            return try await walk(patterns, field: field, category: category, page: page).page
        }
        let ranked = try await rankAll(patterns, field: field, category: category, page: page)
        guard ranked.total > Self.exactTotalLimit else { return ranked.page }
        manyMatches.remember(key, total: ranked.total, version: ranked.version)
        return try await walk(patterns, field: field, category: category, page: page).page
    }

    /// The query as the SQL needs it: an ILIKE pattern, and regular expressions for the ranking.
    struct Patterns {
        /// The query as given (normalised).
        let query: String
        /// `%query%`, with `%`, `_` and `\` escaped: what defines a match.
        let contains: String
        /// A word boundary that also works next to punctuation: not preceded/followed by a word character
        /// (letter, digit or _; \W is its complement). Next to an ASCII letter, digit or _ of the query that is
        /// PostgreSQL's `\m`/`\M` (start/end of a word), which its engine tests at about half the cost.
        let wholeWord: String
        let wordStart: String

        init(_ query: String) {
            self.query = query
            contains = "%" + QuoteSearch.escapeLike(query) + "%"
            let literal = QuoteSearch.escapeRegex(query)
            let before = query.unicodeScalars.first.map(Self.isASCIIWordCharacter) == true ? "\\m" : "(^|\\W)"
            let after = query.unicodeScalars.last.map(Self.isASCIIWordCharacter) == true ? "\\M" : "($|\\W)"
            wholeWord = before + literal + after
            wordStart = before + literal
        }

        private static func isASCIIWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII && (scalar == "_" || scalar.properties.numericType != nil || scalar.properties.isAlphabetic)
        }
    }

    /// A query answered from the index of words (`search.quote_search_words_text`/`_author`, schema/60_answer.sql):
    /// its matches are found among the quotes holding the words its pieces allow, without reading other texts. Exact
    /// when it answers (a total over 1,000: more than 1,000); nil when it cannot tell cheaply. `walked`: the page
    /// was the walk's, so with this total the walk alone answers again at this version.
    private func fromWords(_ patterns: Patterns, field: SearchField, category: QuoteCategory?, page: PageRequest)
        async throws -> (page: Page<Quote>, total: Int, version: Int64, walked: Bool)?
    {
        let rows = try await run(
            """
            SELECT total, version, walked, id AS quote_id, text AS quote_text, author AS quote_author, \
            category AS quote_category, created_at AS quote_created_at \
            FROM search.quote_search_words_\(unsafeSQL: field.column)(\(patterns.query), \(patterns.contains), \
            \(patterns.wholeWord), \(patterns.wordStart), \(category?.rawValue), \(page.size + 1), \(page.offset))
            """)
        guard !rows[0].isNull("total") else { return nil }
        let total = try rows[0].decode("total", as: Int.self)
        return (
            try pageOfQuotes(rows, page, total: total, exact: true), total,
            try rows[0].decode("version", as: Int64.self), try rows[0].decode("walked", as: Bool.self)
        )
    }

    /// At most 1,001 matches, ranked in full (`search.quote_search_ranked_text`/`_author`, schema/40_ranked.sql).
    /// `total` is their number (1,001: more than 1,000, and no rows); `version` is the quotes' version this was read
    /// at.
    private func rankAll(_ patterns: Patterns, field: SearchField, category: QuoteCategory?, page: PageRequest)
        async throws
        -> (page: Page<Quote>, total: Int, version: Int64)
    {
        let rows = try await run(
            """
            SELECT total, version, id AS quote_id, text AS quote_text, author AS quote_author, \
            category AS quote_category, created_at AS quote_created_at \
            FROM search.quote_search_ranked_\(unsafeSQL: field.column)(\(patterns.contains), \
            \(patterns.wholeWord), \(patterns.wordStart), \(category?.rawValue), \(page.size + 1), \(page.offset))
            """)
        let total = try rows[0].decode("total", as: Int.self)
        return (
            try pageOfQuotes(rows, page, total: total, exact: true), total,
            try rows[0].decode("version", as: Int64.self)
        )
    }

    /// A page of a query with `total` matches (more than 1,000 by default), from the tier-by-tier walk
    /// (`quote_search_walk_text`/`_author`), and the quotes' version it was read at.
    private func walk(
        _ patterns: Patterns, field: SearchField, category: QuoteCategory?, page: PageRequest,
        total: Int = exactTotalLimit + 1
    ) async throws -> (page: Page<Quote>, version: Int64) {
        // The query itself too: its tiers are read from the index of words where they are few (docs/search.md).
        let rows = try await run(
            """
            SELECT version.version, walked.* FROM quotes_version AS version LEFT JOIN LATERAL \
            (SELECT w.id AS quote_id, w.text AS quote_text, w.author AS quote_author, w.category AS quote_category, \
            w.created_at AS quote_created_at, n \
            FROM search.quote_search_walk_\(unsafeSQL: field.column)(\(patterns.contains), \(patterns.wholeWord), \
            \(patterns.wordStart), \(patterns.query), \(category?.rawValue), \(page.offset + page.size + 1)) \
            WITH ORDINALITY AS w (id, text, author, category, created_at, tier, n) \
            ORDER BY n OFFSET \(page.offset)) AS walked ON true ORDER BY walked.n
            """)
        let exact = total <= Self.exactTotalLimit
        return (
            try pageOfQuotes(rows, page, total: exact ? total : Self.exactTotalLimit, exact: exact),
            try rows[0].decode("version", as: Int64.self)
        )
    }

    /// One read, pipelined with the searches waiting beside it: under an expensive request's statement timeout
    /// (`PGPool.statementTimeoutOverride`) it shares a pipeline only with such, never with the short reads it would
    /// hold up. A prepared statement (one SQL text per function and field), planned the default way: a generic plan
    /// forced on the read's transaction would also be forced on the functions' own statements, and some of them
    /// need a plan for their values (one-letter searches took three times as long).
    private func run(_ query: PGQuery) async throws -> PGRows {
        try await pool.read(query)
    }

    /// The page from rows of quotes; a row without `quote_id` only carries the total or version.
    private func pageOfQuotes(_ rows: PGRows, _ request: PageRequest, total: Int, exact: Bool) throws -> Page<Quote> {
        try Page(
            rows.filter { !$0.isNull("quote_id") }, request, total: total, totalIsExact: exact, item: Quote.init(row:))
    }

    /// `%`, `_` and `\` match themselves in a LIKE pattern with the default escape character.
    static func escapeLike(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Every character that is not a letter, digit or space becomes a literal in a PostgreSQL regex.
    static func escapeRegex(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar == " " || isLetterMarkOrNumber(scalar) {
                escaped.unicodeScalars.append(scalar)
            } else {
                escaped.append("\\")
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Unicode categories L*, M* and N*: Foundation's `CharacterSet.alphanumerics`, without its per-call cost.
    private static func isLetterMarkOrNumber(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }
}

/// The queries' totals known at one version of the quotes (over 1,000: more than 1,000). A new version forgets
/// them all (a change may have added or removed matches); the table is bounded, and starts over when full.
final class ManyMatchesMemory: Sendable {
    struct Key: Hashable {
        let field: SearchField
        let category: QuoteCategory?
        let query: String
    }

    static let capacity = 10_000
    private let state = Mutex<(version: Int64, totals: [Key: Int])>((-1, [:]))

    /// The version at which `key` had `total` matches, if known.
    func known(_ key: Key) -> (version: Int64, total: Int)? {
        state.withLock { state in state.totals[key].map { (state.version, $0) } }
    }

    func remember(_ key: Key, total: Int, version: Int64) {
        state.withLock { state in
            if version != state.version || state.totals.count >= Self.capacity {
                guard version >= state.version else { return }
                state.version = version
                state.totals.removeAll(keepingCapacity: true)
            }
            state.totals[key] = total
        }
    }
}
