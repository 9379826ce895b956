import Foundation
import HTTPServer
import PGClient
import QuoteVault

// Hand-written JSON for the hot read paths (see JSONWriter).

extension JSONWriter {
    /// `{id, text, author, category, created_at}`. The punctuation between values goes in one piece each: this
    /// runs for every quote of every page.
    mutating func quote(_ quote: Quote) {
        raw(#"{"id":"#); uuid(quote.id)
        raw(#","text":"#); string(quote.text)
        raw(#","author":"#); string(quote.author)
        raw(#","category":"#); string(quote.category)
        raw(#","created_at":"#); timestamp(quote.createdAt)
        raw("}")
    }

    /// `page` in the list envelope, written with room for its items (a quote is ~300 bytes), so the buffer is not
    /// regrown while the page is written.
    static func bytes<Item>(of page: Page<Item>, item: (inout JSONWriter, Item) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + 400 * page.items.count)
        writer.page(page, item: item)
        return writer.bytes
    }

    /// The list envelope `{items, page, page_size, total, has_more, next_cursor}`, with `total_is_exact` when set.
    mutating func page<Item>(_ page: Page<Item>, item: (inout JSONWriter, Item) -> Void) {
        raw("{")
        key("items"); array(page.items, item); comma()
        key("page"); int(page.page); comma()
        key("page_size"); int(page.pageSize); comma()
        key("total"); int(page.total); comma()
        if let exact = page.totalIsExact { key("total_is_exact"); bool(exact); comma() }
        key("has_more"); bool(page.hasMore); comma()
        key("next_cursor"); string(page.nextCursor)
        raw("}")
    }
}

extension Response {
    /// JSON written by `write` into a buffer of `capacity` bytes.
    static func json(
        capacity: Int, status: Int = 200, headers: HTTPHeaders = [:], _ write: (inout JSONWriter) -> Void
    ) -> Response {
        var writer = JSONWriter(capacity: capacity)
        write(&writer)
        return .json(bytes: writer.bytes, status: status, headers: headers)
    }

    /// A page in the list envelope, each item written by `item`.
    static func page<Item>(_ page: Page<Item>, item: (inout JSONWriter, Item) -> Void) -> Response {
        .json(bytes: JSONWriter.bytes(of: page, item: item))
    }
}

extension Request {
    /// `page`, `page_size` and `cursor` from the query string, validated.
    func pageRequest(allowsCursor: Bool = true) throws -> PageRequest {
        try PageRequest.parse(
            page: queryValue("page"), pageSize: queryValue("page_size"), cursor: queryValue("cursor"),
            allowsCursor: allowsCursor)
    }

    /// The path parameter `name` as a UUID; a malformed one answers like an unknown id (`404`).
    func uuidParameter(_ name: String) throws -> UUID {
        guard let id = UUID(canonicalText: pathParameter(name)) else { throw QuoteVaultError.notFound }
        return id
    }
}
