import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// `/v1/favorites…`: the caller's favorites (Bearer).
struct FavoriteRoutes {
    let context: AppContext
    let favorites: FavoritesService

    @Sendable func list(_ request: Request) async throws -> Response {
        let page = try await favorites.list(
            userID: try request.userID, page: try request.pageRequest(allowsCursor: false))
        return .page(page) { $0.listed($1.quote, "favorited_at", $1.favoritedAt) }
    }

    @Sendable func ids(_ request: Request) async throws -> Response {
        let ids = try await favorites.ids(userID: try request.userID)
        return .json(capacity: 40 * ids.count + 16) { writer in
            writer.raw("{")
            writer.key("ids"); writer.array(ids) { $0.uuid($1) }
            writer.raw("}")
        }
    }

    @Sendable func add(_ request: Request) async throws -> Response {
        let quoteID = try request.uuidParameter("quote_id")
        let created = try await favorites.add(userID: try request.userID, quoteID: quoteID)
        return .json(capacity: 64, status: created ? 201 : 200) { $0.favorite(quoteID) }
    }

    @Sendable func remove(_ request: Request) async throws -> Response {
        // A malformed id cannot be a favorite: removing it is the same no-op as removing a missing one.
        if let quoteID = UUID(canonicalText: request.pathParameter("quote_id")) {
            try await favorites.remove(userID: try request.userID, quoteID: quoteID)
        }
        return .noContent
    }
}

extension JSONWriter {
    /// `{quote_id}`: the answer of `PUT /v1/favorites/{quote_id}`.
    mutating func favorite(_ quoteID: UUID) {
        raw("{"); key("quote_id"); uuid(quoteID); raw("}")
    }
}
