import Foundation
import HTTPServer
import QuoteVault

/// `/v1/quotes`, `/v1/quotes/search`, `/v1/quotes/{id}`, `/v1/categories`: public reads.
struct QuoteRoutes {
    let quotes: QuoteService
    let search: QuoteSearch
    /// Searches running at once per client address (see `ConcurrencyGate`).
    let searchGate: ConcurrencyGate
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
        /// As normalised by `QuoteSearch.normalise`: " love" and "love" are one answer.
        let query: String
        let page: Int
        let size: Int
    }

    /// - Parameters:
    ///   - searchesPerAddress: nil when throttling is off (`RATE_LIMITS=off`).
    ///   - answerCacheBytes: the bound of each answer cache (`ANSWER_CACHE_BYTES`); 0: none.
    init(quotes: QuoteService, search: QuoteSearch, searchesPerAddress: Int? = 2, answerCacheBytes: Int = 4 << 20) {
        self.quotes = quotes
        self.search = search
        self.searchGate = ConcurrencyGate(perAddress: searchesPerAddress ?? .max)
        pages = VersionedAnswerCache(capacityInBytes: answerCacheBytes)
        searches = VersionedAnswerCache(capacityInBytes: answerCacheBytes) { 64 + $0.query.utf8.count }
    }

    var routes: [Route] {
        [
            Route(.get, "/v1/quotes", handler: Handler(list)),
            Route(.get, "/v1/quotes/search", handler: Handler(find)),
            Route(.get, "/v1/quotes/{id}", handler: Handler(one)),
            Route(.get, "/v1/categories", handler: Handler(categories)),
        ]
    }

    @Sendable private func list(_ request: Request) async throws -> Response {
        let category = try request.queryValue("category").map { try QuoteCategory.parse($0) }
        let pageRequest = try request.pageRequest()
        // Offset pages are cached per version of the quotes (read first: a page made after a change is then at
        // worst filed under the older version, where no later request finds it). Cursor pages are not: each
        // cursor is its own key, rarely asked twice.
        guard pages.isEnabled, pageRequest.cursor == nil, let number = pageRequest.page else {
            return Response.json(bytes: try await listBody(category, pageRequest)).taggedWithETag()
        }
        let key = PageKey(category: category, page: number, size: pageRequest.size)
        let version = try await quotes.version()
        if let cached = pages[key, version] { return .json(prepared: cached) }
        let body = PreparedBody(try await listBody(category, pageRequest))
        pages.store(body, for: key, version: version)
        return .json(prepared: body)
    }

    private func listBody(_ category: QuoteCategory?, _ pageRequest: PageRequest) async throws -> [UInt8] {
        let page = try await quotes.list(category: category, page: pageRequest)
        var writer = JSONWriter(forPageOf: page.items.count)
        writer.page(page) { $0.quote($1) }
        return writer.bytes
    }

    @Sendable private func find(_ request: Request) async throws -> Response {
        let field: SearchField
        switch request.queryValue("type") ?? "keyword" {
        case "keyword": field = .keyword
        case "author": field = .author
        default: throw QuoteVaultError.invalid("type", "must be keyword or author")
        }
        let category = try request.queryValue("category").map { try QuoteCategory.parse($0) }
        let page = try request.pageRequest(allowsCursor: false)
        let query = try QuoteSearch.normalise(request.queryValue("q"))
        // Search pages are cached per version of the quotes as offset pages are (read first, for the same
        // reason): a popular search asked again costs one small read, however many quotes match it.
        let key = SearchKey(field: field, category: category, query: query, page: page.page ?? 1, size: page.size)
        guard searches.isEnabled else { return Response.json(bytes: try await searchBody(request, key, page)).taggedWithETag() }
        let version = try await quotes.version()
        if let cached = searches[key, version] { return .json(prepared: cached) }
        let body = PreparedBody(try await searchBody(request, key, page))
        searches.store(body, for: key, version: version)
        return .json(prepared: body)
    }

    private func searchBody(_ request: Request, _ key: SearchKey, _ page: PageRequest) async throws -> [UInt8] {
        let results = try await searchGate.run(for: request.clientAddress) {
            try await search.search(key.query, in: key.field, category: key.category, page: page)
        }
        var writer = JSONWriter(forPageOf: results.items.count)
        writer.page(results) { $0.quote($1) }
        return writer.bytes
    }

    @Sendable private func one(_ request: Request) async throws -> Response {
        let quote = try await quotes.quote(id: try request.uuidParameter("id"))
        var writer = JSONWriter(capacity: 512)
        writer.quote(quote)
        return Response.json(bytes: writer.bytes).taggedWithETag()
    }

    @Sendable private func categories(_ request: Request) async throws -> Response {
        let counts = try await quotes.categoryCounts()
        var writer = JSONWriter(capacity: 256)
        writer.raw("{")
        writer.key("items")
        writer.array(counts) { writer, entry in
            writer.raw("{")
            writer.key("category"); writer.string(entry.category.rawValue); writer.comma()
            writer.key("count"); writer.int(entry.count)
            writer.raw("}")
        }
        writer.raw("}")
        return Response.json(bytes: writer.bytes).taggedWithETag()
    }
}
