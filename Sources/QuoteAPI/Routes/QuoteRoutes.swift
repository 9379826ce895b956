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

    /// A page of quotes answered from memory while no quote changed.
    var pageAnswers: Stage {
        pages.stage("page_answer_cache", key: Self.pageKey) { [quotes] in try await quotes.version() }
    }

    /// A popular search asked again costs one small read, however many quotes match it.
    var searchAnswers: Stage {
        searches.stage(
            "search_answer_cache", key: { try Self.searchKey(of: $0).0 },
            version: { [quotes] in try await quotes.version() })
    }

    @Sendable func list(_ request: Request) async throws -> Response {
        let category = try request.queryValue("category").map { try QuoteCategory.parse($0) }
        let page = try await quotes.list(category: category, page: try request.pageRequest())
        return Response.json(bytes: JSONWriter.bytes(of: page) { $0.quote($1) })
    }

    @Sendable func find(_ request: Request) async throws -> Response {
        let (key, page) = try Self.searchKey(of: request)
        // Expensive when not cached (see `CostAdmission`): capped per address and in all, a shorter timeout.
        let results = try await search.search(key.query, in: key.field, category: key.category, page: page)
        return Response.json(bytes: JSONWriter.bytes(of: results) { $0.quote($1) })
    }

    /// The page a request asks for, as the answer cache files it. Cursor pages are not cached: each cursor is its
    /// own key, rarely asked twice.
    @Sendable private static func pageKey(of request: Request) throws -> PageKey? {
        let category = try request.queryValue("category").map { try QuoteCategory.parse($0) }
        let pageRequest = try request.pageRequest()
        guard pageRequest.cursor == nil, let number = pageRequest.page else { return nil }
        return PageKey(category: category, page: number, size: pageRequest.size)
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
    @Sendable func isLikelyUncached(_ request: Request) -> Bool {
        guard searches.isEnabled else { return true }
        guard let (key, _) = try? Self.searchKey(of: request) else { return false }
        return !searches.holdsLatest(key)
    }

    @Sendable func one(_ request: Request) async throws -> Response {
        let quote = try await quotes.quote(id: try request.uuidParameter("id"))
        return Response.json(capacity: 512) { $0.quote(quote) }.taggedWithETag()
    }

    @Sendable func categories(_ request: Request) async throws -> Response {
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
