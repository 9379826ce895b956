import Foundation
import PGClient

/// A named collection of quotes.
public struct QuoteCollection: Sendable {
    public let id: UUID
    public let name: String
    public let createdAt: Date
    public let updatedAt: Date
    public let quoteCount: Int

    /// The columns `init(row:)` reads, for a query over `collections c`.
    static let columns = """
        c.id, c.name, c.created_at, c.updated_at,
        (SELECT count(*) FROM collection_quotes cq WHERE cq.collection_id = c.id)::int8 AS quote_count
        """

    init(row: PGRow) throws {
        id = try row.decode("id")
        name = try row.decode("name")
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        quoteCount = try row.decode("quote_count")
    }
}

/// A quote in a collection, with when it was added.
public struct CollectedQuote: Sendable {
    public let quote: Quote
    public let addedAt: Date
}

/// Each user's collections. The owner (`RowOwner`) is part of every WHERE, so another user's collection is exactly
/// as invisible as a missing one (`notFound`).
public struct CollectionsService: Sendable {
    public static let maximumNameLength = 100
    let pool: PGPool

    /// Trims Unicode whitespace (U+00A0, U+2003 … too) and checks 1…100 characters, counted as Unicode code
    /// points like PostgreSQL's `char_length`, so the table's check always agrees.
    public static func validateName(_ name: String) throws -> String {
        let trimmed = String(name.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !trimmed.isEmpty else { throw QuoteVaultError.invalid("name", "must not be empty or only whitespace") }
        guard trimmed.unicodeScalars.count <= maximumNameLength else {
            throw QuoteVaultError.invalid("name", "must be at most \(maximumNameLength) characters")
        }
        return trimmed
    }

    /// Newest first, each with its quote count: one query whatever the number of collections.
    public func list(userID: UUID) async throws -> [QuoteCollection] {
        try await pool.read(
            """
            SELECT \(unsafeSQL: QuoteCollection.columns) FROM collections c
            WHERE \(RowOwner.collections.owned("c", by: userID)) ORDER BY c.created_at DESC, c.id DESC
            """
        ).map(QuoteCollection.init(row:))
    }

    /// Creates a collection; `id` is the client's own (offline-created) id, else one is made.
    /// - Throws: `Failure.conflict` when `id` is taken (by any user).
    public func create(userID: UUID, name: String, id: UUID? = nil) async throws -> QuoteCollection {
        try await pool.run(try Self.create(userID: userID, name: name, id: id))
    }

    public static func create(userID: UUID, name: String, id: UUID?) throws -> PGOperation<QuoteCollection> {
        let name = try validateName(name)
        return .statement(
            """
            WITH c AS (
                INSERT INTO collections (id, user_id, name)
                VALUES (coalesce(\(id)::uuid, gen_random_uuid()), \(userID), \(name))
                ON CONFLICT (id) DO NOTHING RETURNING *)
            SELECT c.id, c.name, c.created_at, c.updated_at, 0::int8 AS quote_count FROM c
            """
        ) { run in
            guard let row = try run().first else { throw Failure.conflict("A collection with this id already exists") }
            return try QuoteCollection(row: row)
        }
    }

    public func rename(userID: UUID, collectionID: UUID, name: String) async throws -> QuoteCollection {
        try await pool.run(try Self.rename(userID: userID, collectionID: collectionID, name: name))
    }

    public static func rename(userID: UUID, collectionID: UUID, name: String) throws -> PGOperation<QuoteCollection> {
        let name = try validateName(name)
        return .statement(
            """
            WITH c AS (
                UPDATE collections SET name = \(name), updated_at = now()
                WHERE id = \(collectionID) AND \(RowOwner.collections.owned("collections", by: userID)) RETURNING *)
            SELECT \(unsafeSQL: QuoteCollection.columns) FROM c
            """
        ) { run in
            guard let row = try run().first else { throw QuoteVaultError.notFound }
            return try QuoteCollection(row: row)
        }
    }

    /// Deletes the collection; its quote associations go with it (foreign-key cascade, same statement).
    public func delete(userID: UUID, collectionID: UUID) async throws {
        try await pool.run(Self.delete(userID: userID, collectionID: collectionID))
    }

    public static func delete(userID: UUID, collectionID: UUID) -> PGOperation<Void> {
        .statement(
            """
            DELETE FROM collections
            WHERE id = \(collectionID) AND \(RowOwner.collections.owned("collections", by: userID))
            """
        ) { run in
            guard try run().affectedRows == 1 else { throw QuoteVaultError.notFound }
        }
    }

    /// The collection's quotes, newest addition first.
    public func quotes(userID: UUID, collectionID: UUID, page: PageRequest) async throws -> Page<CollectedQuote> {
        try await pool.withConnection { connection in
            try Self.requireOwned(collectionID, by: userID, connection)
            let rows = try connection.query(
                """
                SELECT \(unsafeSQL: Quote.columns()), cq.added_at
                FROM collection_quotes cq JOIN quotes ON quotes.id = cq.quote_id
                WHERE cq.collection_id = \(collectionID)
                ORDER BY cq.added_at DESC, cq.quote_id DESC
                LIMIT \(page.size + 1) OFFSET \(page.offset)
                """)
            let total =
                try connection.query(
                    "SELECT count(*)::int8 AS total FROM collection_quotes WHERE collection_id = \(collectionID)"
                ).first?.decode("total", as: Int.self) ?? 0
            return try Page(rows, page, total: total) { row in
                CollectedQuote(quote: try Quote(row: row), addedAt: try row.decode("added_at"))
            }
        }
    }

    /// Adds a quote. True when added, false when it was already there.
    /// - Throws: `QuoteVaultError.notFound` for an unknown (or someone else's) collection, or an unknown quote.
    public func addQuote(userID: UUID, collectionID: UUID, quoteID: UUID) async throws -> Bool {
        try await pool.run(Self.addQuote(userID: userID, collectionID: collectionID, quoteID: quoteID))
    }

    public static func addQuote(userID: UUID, collectionID: UUID, quoteID: UUID) -> PGOperation<Bool> {
        .connection { connection in
            do {
                // Inserting only through the owned collection keeps ownership in the statement itself.
                let inserted = try connection.query(
                    """
                    INSERT INTO collection_quotes (collection_id, quote_id)
                    SELECT c.id, \(quoteID) FROM collections c
                    WHERE c.id = \(collectionID) AND \(RowOwner.collections.owned("c", by: userID))
                    ON CONFLICT (collection_id, quote_id) DO NOTHING
                    """
                ).affectedRows
                if inserted == 1 { return true }
                try requireOwned(collectionID, by: userID, connection)
                return false
            } catch let error as PGError where error.sqlState == .foreignKeyViolation {
                throw QuoteVaultError.notFound
            }
        }
    }

    /// Removes a quote if present (idempotent); `notFound` for an unknown or foreign collection.
    /// A nil `quoteID` (one that cannot exist) only checks the collection.
    public func removeQuote(userID: UUID, collectionID: UUID, quoteID: UUID?) async throws {
        try await pool.run(Self.removeQuote(userID: userID, collectionID: collectionID, quoteID: quoteID))
    }

    public static func removeQuote(userID: UUID, collectionID: UUID, quoteID: UUID?) -> PGOperation<Void> {
        .connection { connection in
            try requireOwned(collectionID, by: userID, connection)
            guard let quoteID else { return }
            try connection.query(
                """
                DELETE FROM collection_quotes WHERE collection_id = \(collectionID) AND quote_id = \(quoteID)
                """)
        }
    }

    private static func requireOwned(_ collectionID: UUID, by userID: UUID, _ connection: PGConnection) throws {
        let owned = try connection.query(
            """
            SELECT 1 AS owned FROM collections
            WHERE id = \(collectionID) AND \(RowOwner.collections.owned("collections", by: userID))
            """)
        guard !owned.isEmpty else { throw QuoteVaultError.notFound }
    }
}
