import Foundation
import XCTest

/// A device's copy of a user's library, built only from `GET /v1/sync` answers, in comparable form.
public struct SyncedLibrary: Equatable, Sendable, CustomStringConvertible {
    public var favorites: Set<String> = []
    /// Collection id → "name#quote_count".
    public var collections: [String: String] = [:]
    /// "collection_id/quote_id".
    public var links: Set<String> = []
    public var displayName: String?

    public init(
        favorites: Set<String> = [], collections: [String: String] = [:], links: Set<String> = [],
        displayName: String? = nil
    ) {
        self.favorites = favorites
        self.collections = collections
        self.links = links
        self.displayName = displayName
    }

    public var description: String {
        "favorites \(favorites.sorted()), collections \(collections.sorted { $0.key < $1.key }), "
            + "links \(links.sorted()), name \(displayName ?? "nil")"
    }

    /// Applies one `Change` of the feed.
    public mutating func apply(_ change: [String: Any]) throws {
        let upsert = change["op"] as? String == "upsert"
        switch change["type"] as? String {
        case "favorite":
            let id = try XCTUnwrap(change["quote_id"] as? String)
            if upsert { favorites.insert(id) } else { favorites.remove(id) }
        case "collection":
            let id = try XCTUnwrap(change["id"] as? String)
            if upsert {
                let collection = try XCTUnwrap(change["collection"] as? [String: Any])
                collections[id] = "\(collection["name"] as? String ?? "?")#\(collection["quote_count"] as? Int ?? -1)"
            } else {
                collections[id] = nil
                links = links.filter { !$0.hasPrefix(id + "/") }
            }
        case "collection_quote":
            let link =
                "\(try XCTUnwrap(change["collection_id"] as? String))/\(try XCTUnwrap(change["quote_id"] as? String))"
            if upsert { links.insert(link) } else { links.remove(link) }
        case "profile":
            let user = try XCTUnwrap(change["user"] as? [String: Any])
            displayName = user["display_name"] as? String
        default:
            XCTFail("unknown change \(change)")
        }
    }

    /// The server's library as the plain `/v1` routes show it.
    public static func onServer(_ client: HTTPTestClient, _ user: TestUser) throws -> SyncedLibrary {
        var library = SyncedLibrary()
        library.favorites = Set(
            try client.get("/v1/favorites/ids", headers: user.authorization).jsonObject()["ids"] as? [String] ?? [])
        for collection in try client.get("/v1/collections", headers: user.authorization).items() {
            let id = try XCTUnwrap(collection["id"] as? String)
            library.collections[id] =
                "\(collection["name"] as? String ?? "?")#\(collection["quote_count"] as? Int ?? -1)"
            let page = try client.get("/v1/collections/\(id)/quotes?page_size=100", headers: user.authorization)
            for item in try page.items() {
                library.links.insert("\(id)/\(try XCTUnwrap((item["quote"] as? [String: Any])?["id"] as? String))")
            }
        }
        library.displayName =
            try client.get("/v1/me", headers: user.authorization).jsonObject()["display_name"] as? String
        return library
    }
}

extension HTTPTestClient {
    /// Pulls every page from `since` (nil: from scratch) into `library`; returns the last token.
    @discardableResult
    public func pull(
        _ user: TestUser, since: String?, limit: Int = 500, into library: inout SyncedLibrary, maxPages: Int = 10_000
    ) throws -> String {
        var token = since
        for _ in 0..<maxPages {
            var path = "/v1/sync?limit=\(limit)"
            if let token { path += "&since=\(token)" }
            let response = try get(path, headers: user.authorization)
            guard response.status == 200 else {
                throw HTTPTestError.malformedResponse("sync answered \(response.status): \(response.text)")
            }
            let body = try response.jsonObject()
            for change in body["changes"] as? [[String: Any]] ?? [] { try library.apply(change) }
            token = try XCTUnwrap(body["next"] as? String)
            if body["has_more"] as? Bool != true { return token! }
        }
        throw HTTPTestError.timedOut
    }

    /// `POST /v1/sync` with `operations`.
    public func push(_ user: TestUser, _ operations: [[String: Any]]) throws -> HTTPTestResponse {
        try send("POST", "/v1/sync", json: ["operations": operations], headers: user.authorization)
    }
}

public func lower(_ id: UUID) -> String { id.uuidString.lowercased() }
