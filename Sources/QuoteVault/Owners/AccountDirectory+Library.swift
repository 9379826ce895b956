import Foundation
import PGClient

/// What an account holds, as its console page lists it: its newest favorites and its collections.
extension AccountDirectory {
    /// How many favorites and collections an account page lists (the counts above them are whole).
    public static let libraryListLimit = 50

    public struct Favorite: Sendable, Equatable {
        public let quoteID: UUID
        public let text: String
        public let author: String
        public let addedAt: Date
    }

    public struct Collection: Sendable, Equatable {
        public let name: String
        public let quotes: Int
        public let createdAt: Date
    }

    /// The account's newest favorites, at most `libraryListLimit`.
    public func favorites(of id: UUID) async throws -> [Favorite] {
        try await pool.query(
            """
            SELECT q.id, q.text, q.author, f.created_at FROM user_favorites f JOIN quotes q ON q.id = f.quote_id
            WHERE f.user_id = \(id) ORDER BY f.created_at DESC, f.quote_id LIMIT \(Self.libraryListLimit)
            """
        ).map {
            Favorite(
                quoteID: try $0.decode("id"), text: try $0.decode("text"), author: try $0.decode("author"),
                addedAt: try $0.decode("created_at"))
        }
    }

    /// The account's newest collections with how many quotes each holds, at most `libraryListLimit`.
    public func collections(of id: UUID) async throws -> [Collection] {
        try await pool.query(
            """
            SELECT c.name, c.created_at,
                   (SELECT count(*) FROM collection_quotes cq WHERE cq.collection_id = c.id)::int AS quotes
            FROM collections c WHERE c.user_id = \(id)
            ORDER BY c.created_at DESC, c.id DESC LIMIT \(Self.libraryListLimit)
            """
        ).map {
            Collection(
                name: try $0.decode("name"), quotes: try $0.decode("quotes"), createdAt: try $0.decode("created_at"))
        }
    }
}
