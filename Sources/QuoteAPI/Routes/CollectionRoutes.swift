import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// `/v1/collections…`: the caller's collections (Bearer). Someone else's collection is a `404`, like a
/// missing one, on every route.
struct CollectionRoutes {
    let context: AppContext
    let collections: CollectionsService

    private struct NameBody: Decodable { let name: String }
    /// `id`: a client-generated id (an offline-created collection); a taken one is `409 conflict`.
    private struct CreateBody: Decodable { let name: String; let id: UUID? }

    @Sendable func list(_ request: Request) async throws -> Response {
        let all = try await collections.list(userID: try request.userID)
        return .json(capacity: 160 * all.count + 16) { writer in
            writer.raw("{")
            writer.key("items"); writer.array(all) { $0.collection($1) }
            writer.raw("}")
        }
    }

    @Sendable func create(_ request: Request) async throws -> Response {
        let body = try request.decodeJSON(CreateBody.self)
        return Self.respond(
            try await collections.create(userID: try request.userID, name: body.name, id: body.id), status: 201)
    }

    @Sendable func rename(_ request: Request) async throws -> Response {
        let id = try request.uuidParameter("id")
        let body = try request.decodeJSON(NameBody.self)
        return Self.respond(
            try await collections.rename(userID: try request.userID, collectionID: id, name: body.name), status: 200)
    }

    @Sendable func delete(_ request: Request) async throws -> Response {
        try await collections.delete(userID: try request.userID, collectionID: try request.uuidParameter("id"))
        return .noContent
    }

    @Sendable func quotes(_ request: Request) async throws -> Response {
        let id = try request.uuidParameter("id")
        let page = try await collections.quotes(
            userID: try request.userID, collectionID: id, page: try request.pageRequest(allowsCursor: false))
        return .page(page) { $0.listed($1.quote, "added_at", $1.addedAt) }
    }

    @Sendable func addQuote(_ request: Request) async throws -> Response {
        let id = try request.uuidParameter("id")
        let quoteID = try request.uuidParameter("quote_id")
        let added = try await collections.addQuote(userID: try request.userID, collectionID: id, quoteID: quoteID)
        return .json(capacity: 128, status: added ? 201 : 200) {
            $0.collectionQuote(collectionID: id, quoteID: quoteID)
        }
    }

    @Sendable func removeQuote(_ request: Request) async throws -> Response {
        let id = try request.uuidParameter("id")
        // A malformed quote id cannot be in the collection: a no-op, but an unknown collection is still 404.
        let quoteID = UUID(canonicalText: request.pathParameter("quote_id"))
        try await collections.removeQuote(userID: try request.userID, collectionID: id, quoteID: quoteID)
        return .noContent
    }

    private static func respond(_ collection: QuoteCollection, status: Int) -> Response {
        .json(capacity: 256, status: status) { $0.collection(collection) }
    }
}

extension JSONWriter {
    /// `{quote, <stamp>}`: a quote in the caller's favorites or a collection, with when it was put there.
    mutating func listed(_ listed: Quote, _ stamp: StaticString, _ date: Date) {
        raw("{")
        key("quote"); quote(listed); comma()
        key(stamp); timestamp(date)
        raw("}")
    }

    /// `{collection_id, quote_id}`: the answer of `PUT /v1/collections/{id}/quotes/{quote_id}`.
    mutating func collectionQuote(collectionID: UUID, quoteID: UUID) {
        raw("{")
        key("collection_id"); uuid(collectionID); comma()
        key("quote_id"); uuid(quoteID)
        raw("}")
    }

    /// `{id, name, created_at, updated_at, quote_count}`.
    mutating func collection(_ collection: QuoteCollection) {
        raw("{")
        key("id"); uuid(collection.id); comma()
        key("name"); string(collection.name); comma()
        key("created_at"); timestamp(collection.createdAt); comma()
        key("updated_at"); timestamp(collection.updatedAt); comma()
        key("quote_count"); int(collection.quoteCount)
        raw("}")
    }
}
