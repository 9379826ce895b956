import Foundation
import HTTPServer
import QuoteVault

/// `/v1/sync`: the change feed of the caller's library (GET) and a batch of queued offline operations (POST).
struct SyncRoutes {
    let context: AppContext
    var sync: SyncContext { context.sync }

    @Sendable func changes(_ request: Request) async throws -> Response {
        let user = try request.user
        var errors: [HTTPError.FieldError] = []
        var limit = SyncFeed.defaultLimit
        if let text = request.queryValue("limit") {
            if let value = Int(text), (1...SyncFeed.maximumLimit).contains(value) {
                limit = value
            } else {
                errors.append(
                    .init(field: "limit", message: "must be a whole number from 1 to \(SyncFeed.maximumLimit)"))
            }
        }
        var since: SyncToken?
        if let text = request.queryValue("since") {
            do { since = try sync.tokens.decode(text, userID: user.userID) } catch QuoteVaultError.validation(
                let fields)
            {
                errors += fields.map { HTTPError.FieldError(field: $0.field, message: $0.message) }
            }
        }
        guard errors.isEmpty else { throw HTTPError.validation(errors) }
        let page = try await sync.feed.page(userID: user.userID, since: since, limit: limit)
        var writer = JSONWriter(capacity: 96 * page.changes.count + 128)
        writer.raw("{")
        writer.key("changes"); writer.array(page.changes) { $0.change($1) }; writer.comma()
        writer.key("next"); writer.string(sync.tokens.encode(page.next, userID: user.userID)); writer.comma()
        writer.key("has_more"); writer.bool(page.hasMore)
        writer.raw("}")
        return .json(bytes: writer.bytes, headers: ["Cache-Control": "no-store"])
    }

    /// Server-sent events: `changed` with the feed's position now, then after each change (see `LiveFeed`).
    @Sendable func events(_ request: Request) async throws -> Response {
        let stream = try await context.live.open(for: try request.user, from: request.clientAddress)
        return .eventStream(stream)
    }

    @Sendable func applyBatch(_ request: Request) async throws -> Response {
        let user = try request.user
        let operations = try SyncOperation.parseBatch(try request.decodeJSON(JSONValue.self))
        let batch = SyncBatch(pool: context.pool, answer: SyncBatch.v1Answer)
        let results = try await batch.apply(operations, userID: user.userID)
        let position = try await sync.feed.position(userID: user.userID)
        var writer = JSONWriter(capacity: 160 * results.count + 128)
        writer.raw("{")
        writer.key("results")
        writer.array(results) { writer, result in
            writer.raw("{")
            writer.key("id"); writer.uuid(result.id); writer.comma()
            writer.key("status"); writer.int(result.status)
            if let code = result.code { writer.comma(); writer.key("code"); writer.string(code) }
            if let object = result.object { writer.comma(); writer.key("object"); writer.raw(bytes: object) }
            writer.raw("}")
        }
        writer.comma()
        writer.key("next"); writer.string(sync.tokens.encode(position, userID: user.userID))
        writer.raw("}")
        return .json(bytes: writer.bytes, headers: ["Cache-Control": "no-store"])
    }
}

extension JSONWriter {
    /// A `Change` of the feed: flat, the object's fields only on `upsert`.
    mutating func change(_ change: SyncChange) {
        raw("{")
        switch change {
        case .favorite(let quoteID, let favoritedAt):
            key("type"); string("favorite"); comma()
            operation(upsert: favoritedAt != nil)
            key("quote_id"); uuid(quoteID)
            if let favoritedAt { comma(); key("favorited_at"); timestamp(favoritedAt) }
        case .collection(let id, let collection):
            key("type"); string("collection"); comma()
            operation(upsert: collection != nil)
            key("id"); uuid(id)
            if let collection { comma(); key("collection"); self.collection(collection) }
        case .collectionQuote(let collectionID, let quoteID, let addedAt):
            key("type"); string("collection_quote"); comma()
            operation(upsert: addedAt != nil)
            key("collection_id"); uuid(collectionID); comma()
            key("quote_id"); uuid(quoteID)
            if let addedAt { comma(); key("added_at"); timestamp(addedAt) }
        case .profile(let user):
            key("type"); string("profile"); comma()
            operation(upsert: true)
            key("user"); self.user(user)
        }
        raw("}")
    }

    private mutating func operation(upsert: Bool) {
        key("op"); string(upsert ? "upsert" : "delete"); comma()
    }
}
