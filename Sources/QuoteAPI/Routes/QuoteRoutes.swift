import Foundation
import HTTPServer
import QuoteVault

/// `/v1/quotes`, `/v1/quotes/search`, `/v1/quotes/{id}`, `/v1/categories`: public reads.
struct QuoteRoutes {
    let quotes: QuoteService
    let search: QuoteSearch
    private let pages: VersionedAnswerCache<PageKey>
    private let searches: VersionedAnswerCache<SearchKey>

    struct PageKey: Hashable, Sendable {
        let category: QuoteCategory?
        let page: Int
        let size: Int
    }

    struct SearchKey: Hashable, Sendable {
        let field: SearchField
        let category: QuoteCategory?
        /// " love" and "love" are one answer.
        let query: SearchQuery
        let page: Int
        let size: Int
    }

    /// - Parameters:
    ///   - answerCacheBytes: the bound of each answer cache (`ANSWER_CACHE_BYTES`); 0: none.
    init(quotes: QuoteService, search: QuoteSearch, answerCacheBytes: Int = 4 << 20) {
        self.quotes = quotes
        self.search = search
        pages = VersionedAnswerCache(capacityInBytes: answerCacheBytes)
        searches = VersionedAnswerCache(capacityInBytes: answerCacheBytes) { 64 + $0.query.text.utf8.count }
    }

    var routes: [Route] {
        [
            Route(.get, "/v1/quotes", cost: .cheapRead, handler: Handler(list)),
            // Expensive unless its answer is likely cached: a popular search asked again costs one small read.
            Route(
                .get, "/v1/quotes/search", cost: .upgraded(.cheapRead, expensiveWhen: isLikelyUncached),
                handler: Handler(find)),
            Route(.get, "/v1/quotes/{id}", cost: .cheapRead, handler: Handler(one)),
            Route(.get, "/v1/categories", cost: .cheapRead, handler: Handler(categories)),
        ]
    }

    @Sendable private func list(_ request: Request) async throws -> Response {
        let category = try request.queryValue("category").map { try QuoteCategory.parse($0) }
        let pageRequest = try request.pageRequest()
        // Cursor pages are not cached: each cursor is its own key, rarely asked twice.
        var key: PageKey?
        if pageRequest.cursor == nil, let number = pageRequest.page {
            key = PageKey(category: category, page: number, size: pageRequest.size)
        }
        return try await answer(from: pages, key: key) {
            JSONWriter.bytes(of: try await quotes.list(category: category, page: pageRequest)) { $0.quote($1) }
        }
    }

    @Sendable private func find(_ request: Request) async throws -> Response {
        let (key, page) = try Self.searchKey(of: request)
        // A popular search asked again costs one small read, however many quotes match it.
        return try await answer(from: searches, key: key) {
            // Expensive when not cached (see `CostAdmission`): capped per address and in all, a shorter timeout.
            let results = try await search.search(key.query, in: key.field, category: key.category, page: page)
            return JSONWriter.bytes(of: results) { $0.quote($1) }
        }
    }

    /// The search a request asks for, as the answer cache files it.
    private static func searchKey(of request: Request) throws -> (SearchKey, PageRequest) {
        let field: SearchField
        switch request.queryValue("type") ?? "keyword" {
        case "keyword": field = .keyword
        case "author": field = .author
        default: throw QuoteVaultError.invalid("type", "must be keyword or author")
        }
        let category = try request.queryValue("category").map { try QuoteCategory.parse($0) }
        let page = try request.pageRequest(allowsCursor: false)
        let query = try SearchQuery(request.queryValue("q"))
        return (SearchKey(field: field, category: category, query: query, page: page.page ?? 1, size: page.size), page)
    }

    /// Whether a search will likely run its query (its answer is not filed at the newest version seen). One that
    /// does not parse is cheap: it is refused before any SQL.
    @Sendable private func isLikelyUncached(_ request: Request) -> Bool {
        guard searches.isEnabled else { return true }
        guard let (key, _) = try? Self.searchKey(of: request) else { return false }
        return !searches.holdsLatest(key)
    }

    /// The answer from `cache` when it was made at the quotes' current version, else made by `make` and filed.
    /// The version is read first: an answer made after a change is then at worst filed under the older version,
    /// where no later request finds it. Without a key (or with caches off) the answer is made and tagged.
    private func answer<Key>(
        from cache: VersionedAnswerCache<Key>, key: Key?, make: () async throws -> [UInt8]
    ) async throws -> Response {
        guard cache.isEnabled, let key else { return Response.json(bytes: try await make()).taggedWithETag() }
        let version = try await quotes.version()
        if let cached = cache[key, version] { return .json(prepared: cached) }
        let body = PreparedBody(try await make())
        cache.store(body, for: key, version: version)
        return .json(prepared: body)
    }

    @Sendable private func one(_ request: Request) async throws -> Response {
        let quote = try await quotes.quote(id: try request.uuidParameter("id"))
        return Response.json(capacity: 512) { $0.quote(quote) }.taggedWithETag()
    }

    @Sendable private func categories(_ request: Request) async throws -> Response {
        let counts = try await quotes.categoryCounts()
        return Response.json(capacity: 256) { writer in
            writer.raw("{")
            writer.key("items")
            writer.array(counts) { writer, entry in
                writer.raw("{")
                writer.key("category"); writer.string(entry.category.rawValue); writer.comma()
                writer.key("count"); writer.int(entry.count)
                writer.raw("}")
            }
            writer.raw("}")
        }.taggedWithETag()
    }
}
