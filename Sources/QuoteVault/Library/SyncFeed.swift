import Foundation
import PGClient

/// One entry of the change feed. An upsert carries the object's state as the feed was read (never older than
/// the change itself); a deletion only its identity.
public enum SyncChange: Sendable {
    /// `favoritedAt` nil: the favorite was removed.
    case favorite(quoteID: UUID, favoritedAt: Date?)
    /// `collection` nil: the collection was deleted (its quotes with it).
    case collection(id: UUID, collection: QuoteCollection?)
    /// `addedAt` nil: the quote was removed from the collection.
    case collectionQuote(collectionID: UUID, quoteID: UUID, addedAt: Date?)
    case profile(User)
}

/// A page of the feed and where the next one starts.
public struct SyncPage: Sendable {
    public let changes: [SyncChange]
    public let next: SyncToken
    public let hasMore: Bool
}

/// Reads a user's change feed (see migrations/0008_offline_sync.sql for why positions are per-user numbers given
/// out under the user's row lock: a reader never skips a change that commits after it looked).
public struct SyncFeed: Sendable {
    public static let defaultLimit = 500
    public static let maximumLimit = 1000
    /// History is kept at least this long (pruned by `SyncMaintenance`).
    public static let historyRetention: Duration = .seconds(30 * 24 * 3600)

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Without `since`: the whole library as upserts, listed from one snapshot whose position the last page's
    /// token continues from. With `since`: every change after it, oldest first. At most `limit` changes.
    /// - Throws: `Failure.syncTokenExpired` when `since` is older than the kept history.
    public func page(userID: UUID, since: SyncToken?, limit: Int) async throws -> SyncPage {
        try await pool.withConnection { connection in
            try connection.transaction { connection in
                // One snapshot for the whole page: a first page's position and its listing agree exactly.
                try connection.execute(unsafeSQL: "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return try Self.page(userID: userID, since: since, limit: limit, connection)
            }
        }
    }

    /// The feed's current end for the user: a token after every change committed so far.
    public func position(userID: UUID) async throws -> SyncToken {
        let row = try await pool.read(
            "SELECT last_seq FROM sync_positions p WHERE \(RowOwner.syncPositions.owned("p", by: userID))"
        ).first
        return SyncToken(seq: try row?.decode("last_seq", as: Int64.self) ?? 0, listing: nil)
    }

    private static func page(userID: UUID, since: SyncToken?, limit: Int, _ connection: PGConnection) throws -> SyncPage
    {
        let position = try connection.query(
            """
            SELECT last_seq, pruned_through FROM sync_positions p WHERE \(RowOwner.syncPositions.owned("p", by: userID))
            """
        ).first
        let last = try position?.decode("last_seq", as: Int64.self) ?? 0
        let pruned = try position?.decode("pruned_through", as: Int64.self) ?? 0
        var token =
            since ?? SyncToken(seq: last, listing: SyncToken.Listing(phase: .profile, after: nil, afterQuote: nil))
        // A token from before the pruned history, or past the newest change (a restored database), cannot be
        // continued without possibly skipping something.
        guard token.seq >= pruned, token.seq <= last else { throw Failure.syncTokenExpired }

        var changes: [SyncChange] = []
        var remaining = limit
        var hasMore = false
        while let listing = token.listing {
            let listed = try list(listing, userID: userID, limit: remaining, connection)
            changes += listed.changes
            remaining -= listed.changes.count
            if let next = listed.next {
                token.listing = next
                hasMore = true
                break
            }
            token.listing = listing.phase.following.map { SyncToken.Listing(phase: $0, after: nil, afterQuote: nil) }
        }
        if token.listing == nil && !hasMore {
            let read = try changesAfter(token.seq, userID: userID, limit: remaining, connection)
            changes += read.changes
            token.seq = read.lastSeq ?? token.seq
            hasMore = read.hasMore
        }
        return SyncPage(changes: changes, next: token, hasMore: hasMore)
    }

    /// Up to `limit` objects of one listing phase; `next` is where the phase continues when it has more.
    private static func list(_ listing: SyncToken.Listing, userID: UUID, limit: Int, _ connection: PGConnection) throws
        -> (changes: [SyncChange], next: SyncToken.Listing?)
    {
        let fetch = limit + 1
        switch listing.phase {
        case .profile:
            guard limit > 0 else { return ([], listing) }
            return ([.profile(try User.load(userID, connection))], nil)
        case .collections:
            let rows = try connection.query(
                """
                SELECT \(unsafeSQL: QuoteCollection.columns) FROM collections c
                WHERE \(RowOwner.collections.owned("c", by: userID))
                  AND (\(listing.after)::uuid IS NULL OR c.id > \(listing.after))
                ORDER BY c.id LIMIT \(fetch)
                """)
            return try listed(rows, limit: limit, phase: .collections) { row in
                let collection = try QuoteCollection(row: row)
                return (.collection(id: collection.id, collection: collection), collection.id, nil)
            }
        case .favorites:
            let rows = try connection.query(
                """
                SELECT quote_id, created_at FROM user_favorites f
                WHERE \(RowOwner.favorites.owned("f", by: userID))
                  AND (\(listing.after)::uuid IS NULL OR quote_id > \(listing.after))
                ORDER BY quote_id LIMIT \(fetch)
                """)
            return try listed(rows, limit: limit, phase: .favorites) { row in
                let quoteID = try row.decode("quote_id", as: UUID.self)
                let favoritedAt = try row.decode("created_at", as: Date.self)
                return (.favorite(quoteID: quoteID, favoritedAt: favoritedAt), quoteID, nil)
            }
        case .collectionQuotes:
            let rows = try connection.query(
                """
                SELECT cq.collection_id, cq.quote_id, cq.added_at
                FROM collections c JOIN collection_quotes cq ON cq.collection_id = c.id
                WHERE \(RowOwner.collections.owned("c", by: userID))
                  AND (\(listing.after)::uuid IS NULL
                       OR (cq.collection_id, cq.quote_id) > (\(listing.after), \(listing.afterQuote)))
                ORDER BY cq.collection_id, cq.quote_id LIMIT \(fetch)
                """)
            return try listed(rows, limit: limit, phase: .collectionQuotes) { row in
                let collectionID = try row.decode("collection_id", as: UUID.self)
                let quoteID = try row.decode("quote_id", as: UUID.self)
                let added = SyncChange.collectionQuote(
                    collectionID: collectionID, quoteID: quoteID, addedAt: try row.decode("added_at", as: Date.self))
                return (added, collectionID, quoteID)
            }
        }
    }

    /// The first `limit` of `rows` (read `limit + 1`) as changes, each with the ids the listing is ordered by; when
    /// there are more, the phase continues after the last one listed.
    private static func listed(
        _ rows: PGRows, limit: Int, phase: SyncListingPhase, _ change: (PGRow) throws -> (SyncChange, UUID, UUID?)
    ) throws -> (changes: [SyncChange], next: SyncToken.Listing?) {
        let listed = try rows.prefix(limit).map(change)
        guard rows.count > limit else { return (listed.map(\.0), nil) }
        return (listed.map(\.0), SyncToken.Listing(phase: phase, after: listed.last?.1, afterQuote: listed.last?.2))
    }

    /// Up to `limit` change rows after `seq`, each answered with its object's current state. Within a page only
    /// the last change of each object is kept (earlier ones say nothing the last does not), and an upsert whose
    /// object is gone is left out: its deletion is a later change of the feed.
    private static func changesAfter(_ seq: Int64, userID: UUID, limit: Int, _ connection: PGConnection) throws
        -> (changes: [SyncChange], lastSeq: Int64?, hasMore: Bool)
    {
        guard limit > 0 else {
            let more = try connection.query(
                """
                SELECT 1 AS more FROM sync_changes ch
                WHERE \(RowOwner.syncChanges.owned("ch", by: userID)) AND ch.seq > \(seq) LIMIT 1
                """)
            return ([], nil, !more.isEmpty)
        }
        let rows = try connection.query(
            """
            SELECT ch.seq AS change_seq, ch.kind AS change_kind, ch.op AS change_op, ch.object_id AS change_object,
                   ch.quote_id AS change_quote, f.created_at AS favorited_at, cq.added_at AS added_at,
                   \(unsafeSQL: QuoteCollection.columns)
            FROM sync_changes ch
            LEFT JOIN user_favorites f ON ch.kind = 'favorite' AND ch.op = 'upsert'
                AND \(RowOwner.favorites.owned("f", by: userID)) AND f.quote_id = ch.object_id
            LEFT JOIN collections c ON ch.kind = 'collection' AND ch.op = 'upsert'
                AND c.id = ch.object_id AND \(RowOwner.collections.owned("c", by: userID))
            LEFT JOIN collection_quotes cq ON ch.kind = 'collection_quote' AND ch.op = 'upsert'
                AND cq.collection_id = ch.object_id AND cq.quote_id = ch.quote_id
            WHERE \(RowOwner.syncChanges.owned("ch", by: userID)) AND ch.seq > \(seq)
            ORDER BY ch.seq LIMIT \(limit + 1)
            """)
        let page = rows.prefix(limit)
        // The last change of each object, in feed order.
        var lastIndex: [String: Int] = [:]
        for (index, row) in page.enumerated() {
            let key =
                try "\(row.decode("change_kind", as: String.self))/\(row.decode("change_object", as: UUID.self))/"
                + "\(row.decode("change_quote", as: UUID?.self)?.uuidString ?? "")"
            lastIndex[key] = index
        }
        let kept = Set(lastIndex.values)
        var profile: User?
        var changes: [SyncChange] = []
        for (index, row) in page.enumerated() where kept.contains(index) {
            let upsert = try row.decode("change_op", as: String.self) == "upsert"
            let object = try row.decode("change_object", as: UUID.self)
            switch try row.decode("change_kind", as: String.self) {
            case "favorite":
                let favoritedAt = try row.decode("favorited_at", as: Date?.self)
                if upsert && favoritedAt == nil { continue }
                changes.append(.favorite(quoteID: object, favoritedAt: upsert ? favoritedAt : nil))
            case "collection":
                if upsert && row.isNull("id") { continue }
                changes.append(.collection(id: object, collection: upsert ? try QuoteCollection(row: row) : nil))
            case "collection_quote":
                let addedAt = try row.decode("added_at", as: Date?.self)
                if upsert && addedAt == nil { continue }
                changes.append(
                    .collectionQuote(
                        collectionID: object, quoteID: try row.decode("change_quote"), addedAt: upsert ? addedAt : nil))
            default:
                profile = try profile ?? User.load(userID, connection)
                changes.append(.profile(profile!))
            }
        }
        return (changes, try page.last?.decode("change_seq", as: Int64.self), rows.count > limit)
    }
}

extension SyncListingPhase {
    var following: SyncListingPhase? { SyncListingPhase(rawValue: rawValue + 1) }
}
