import Foundation

/// Which page of a list a client asked for: `page`/`page_size`, or a keyset `cursor`.
public struct PageRequest: Sendable, Equatable {
    public static let defaultSize = 20
    public static let maximumSize = 100

    /// 1-based; nil when the client paged by cursor.
    public let page: Int?
    public let size: Int
    /// The opaque cursor as the client sent it.
    public let cursor: String?

    public var offset: Int { ((page ?? 1) - 1) * size }

    /// Validates `page` (≥ 1, default 1), `page_size` (1…100, default 20) and `cursor` (not with `page`).
    public static func parse(page: String?, pageSize: String?, cursor: String?, allowsCursor: Bool = true) throws
        -> PageRequest
    {
        var errors: [FieldError] = []
        var pageNumber: Int? = 1
        var size = defaultSize
        if let page {
            if let value = Int(page), value >= 1, value <= 1_000_000_000 {
                pageNumber = value
            } else {
                errors.append(FieldError(field: "page", message: "must be a whole number from 1 to 1000000000"))
            }
        }
        if let pageSize {
            if let value = Int(pageSize), (1...maximumSize).contains(value) {
                size = value
            } else {
                errors.append(
                    FieldError(field: "page_size", message: "must be a whole number from 1 to \(maximumSize)"))
            }
        }
        if let cursor {
            if !allowsCursor {
                errors.append(FieldError(field: "cursor", message: "is not supported on this route"))
            } else if page != nil {
                errors.append(FieldError(field: "cursor", message: "cannot be combined with page"))
            } else if cursor.isEmpty {
                errors.append(FieldError(field: "cursor", message: "must not be empty"))
            }
            pageNumber = nil
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        return PageRequest(page: pageNumber, size: size, cursor: cursor)
    }

    public init(page: Int?, size: Int, cursor: String? = nil) {
        self.page = page
        self.size = size
        self.cursor = cursor
    }
}

/// One page of a list: the contract's envelope `{items, page, page_size, total, has_more, next_cursor}`
/// (search answers add `total_is_exact`).
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let page: Int?
    public let pageSize: Int
    public let total: Int
    public let hasMore: Bool
    public let nextCursor: String?
    /// Search answers only: false when `total` stopped counting (at 1,000); nil on the other lists.
    public let totalIsExact: Bool?

    /// The page of `request` from `rows`, read one past the page's size to tell whether more follow.
    init<Row>(
        _ rows: some Collection<Row>, _ request: PageRequest, total: Int, nextCursor: String? = nil,
        totalIsExact: Bool? = nil, item: (Row) throws -> Item
    ) rethrows {
        items = try rows.prefix(request.size).map(item)
        page = request.page
        pageSize = request.size
        self.total = total
        hasMore = rows.count > request.size
        self.nextCursor = nextCursor
        self.totalIsExact = totalIsExact
    }
}
