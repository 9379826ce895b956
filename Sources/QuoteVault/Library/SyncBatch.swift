import Foundation
import PGClient

/// Applies the queued operations of `POST /v1/sync` in order, each at most once.
///
/// The whole batch is one transaction (one commit, not one per operation): it first claims every operation id
/// in `sync_operations` in one statement, in id order (a concurrent retry of the same batch, on any instance,
/// waits for this one's claims without holding anything this one needs, then reads its results); ids already
/// claimed by an earlier batch answer their stored result. Each claimed operation runs under a savepoint, so
/// one that fails (404, 409, 422) is rolled back alone and its failure is the result remembered; the results are
/// stored before the commit, with the effects. A database failure fails the whole batch (5xx, nothing applied,
/// nothing remembered): the client sends it again. What each result says is the surface's (`Answer`).
public struct SyncBatch: Sendable {
    /// One operation's result: what its route would answer.
    public struct Result: Sendable {
        public let id: UUID
        public let status: Int
        public let code: String?
        /// The answer's JSON body, when the route answers with one.
        public let object: [UInt8]?
    }

    /// What an applied operation did.
    public enum Outcome: Sendable {
        /// `favorite.add`; `added` false when it already was one.
        case favorite(quoteID: UUID, added: Bool)
        case collection(QuoteCollection, created: Bool)
        case collectionQuote(collectionID: UUID, quoteID: UUID, added: Bool)
        case profile(User)
        /// A removal or deletion: nothing to show.
        case removed
    }

    /// How the surface answers an operation's outcome or failure as its route would (a failure answered with 500
    /// or more fails the whole batch).
    public typealias Answer =
        @Sendable (Swift.Result<Outcome, any Error>) -> (status: Int, code: String?, object: [UInt8]?)

    let pool: PGPool
    let answer: Answer

    public init(pool: PGPool, answer: @escaping Answer) {
        self.pool = pool
        self.answer = answer
    }

    /// Results of operations one account keeps (30 days of them): storage stays bounded whatever a client sends.
    /// A batch that would keep more is refused whole (`403 quota_exceeded`); operations already applied still
    /// answer their stored result.
    public static let maximumResultsPerUser = 50_000

    public func apply(_ operations: [SyncOperation], userID: UUID) async throws -> [Result] {
        guard !operations.isEmpty else { return [] }
        return try await pool.withTransaction { [answer] connection in
            try Self.apply(operations, userID: userID, answer: answer, connection)
        }
    }

    private static func apply(
        _ operations: [SyncOperation], userID: UUID, answer: Answer, _ connection: PGConnection
    ) throws -> [Result] {
        let ids = Array(Set(operations.map(\.id)))
        // One batch of a user at a time counts against the quota, so two at once cannot overshoot it.
        try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("quota:sync_operations:\(userID)"), 0))")
        let claimed = Set(
            try connection.query(
                """
                INSERT INTO sync_operations (user_id, id, status)
                SELECT \(userID), id, 0 FROM unnest(\(ids)::uuid[]) AS claim (id) ORDER BY id
                ON CONFLICT (user_id, id) DO NOTHING RETURNING id
                """
            ).map { try $0.decode("id", as: UUID.self) })
        if !claimed.isEmpty,
            try connection.query(
                """
                SELECT count(*)::int8 AS kept FROM (
                    SELECT 1 FROM sync_operations s WHERE \(RowOwner.syncOperations.owned("s", by: userID))
                    LIMIT \(Self.maximumResultsPerUser + 1)) AS kept
                """)[0].decode("kept", as: Int.self) > Self.maximumResultsPerUser
        {
            // Thrown inside the transaction: the claims are rolled back with it.
            throw Failure.quotaExceeded(
                quota: "sync_results_per_account",
                message: "an account keeps at most \(Self.maximumResultsPerUser) results of sync operations")
        }
        var results: [UUID: Result] = [:]
        for row in try connection.query(
            """
            SELECT id, status, code, object FROM sync_operations s
            WHERE \(RowOwner.syncOperations.owned("s", by: userID))
              AND id = ANY(\(ids.filter { !claimed.contains($0) })::uuid[])
            """)
        {
            let id = try row.decode("id", as: UUID.self)
            results[id] = Result(
                id: id, status: try row.decode("status"), code: try row.decode("code"),
                object: try row.decode("object", as: String?.self).map { Array($0.utf8) })
        }
        var applied: [Result] = []
        for operation in operations where results[operation.id] == nil {
            let outcome = Swift.Result { try connection.transaction { try run(operation.action, userID: userID, $0) } }
            let answered = answer(outcome)
            if case .failure(let error) = outcome, answered.status >= 500 { throw error }
            let result = Result(id: operation.id, status: answered.status, code: answered.code, object: answered.object)
            results[operation.id] = result
            applied.append(result)
        }
        if !applied.isEmpty {
            try connection.query(
                """
                UPDATE sync_operations s SET status = r.status, code = nullif(r.code, ''), object = nullif(r.object, '')
                FROM unnest(
                         \(applied.map(\.id))::uuid[], \(applied.map(\.status))::int8[],
                         \(applied.map { $0.code ?? "" })::text[],
                         \(applied.map { $0.object.map { String(decoding: $0, as: UTF8.self) } ?? "" })::text[])
                     AS r (id, status, code, object)
                WHERE \(RowOwner.syncOperations.owned("s", by: userID)) AND s.id = r.id
                """)
        }
        return operations.map { results[$0.id]! }
    }

    /// The operation's effect, as its route has it.
    private static func run(_ action: SyncOperation.Action, userID: UUID, _ db: PGConnection) throws -> Outcome {
        func name(_ value: JSONValue?) throws -> String {
            guard let name = value?.stringValue else {
                throw QuoteVaultError.invalid("name", value == nil ? "is required" : "must be a string")
            }
            return name
        }
        switch action {
        case .favoriteAdd(let quoteID):
            let added = try db.run(FavoritesService.add(userID: userID, quoteID: quoteID))
            return .favorite(quoteID: quoteID, added: added)
        case .favoriteRemove(let quoteID):
            try db.run(FavoritesService.remove(userID: userID, quoteID: quoteID))
        case .collectionCreate(let collectionID, let value):
            let create = try CollectionsService.create(userID: userID, name: try name(value), id: collectionID)
            return .collection(try db.run(create), created: true)
        case .collectionRename(let collectionID, let value):
            let rename = try CollectionsService.rename(userID: userID, collectionID: collectionID, name: name(value))
            return .collection(try db.run(rename), created: false)
        case .collectionDelete(let collectionID):
            try db.run(CollectionsService.delete(userID: userID, collectionID: collectionID))
        case .collectionAddQuote(let collectionID, let quoteID):
            let add = CollectionsService.addQuote(userID: userID, collectionID: collectionID, quoteID: quoteID)
            let added = try db.run(add)
            return .collectionQuote(collectionID: collectionID, quoteID: quoteID, added: added)
        case .collectionRemoveQuote(let collectionID, let quoteID):
            try db.run(CollectionsService.removeQuote(userID: userID, collectionID: collectionID, quoteID: quoteID))
        case .profileUpdate(let displayName, let preferences):
            let patch = try ProfilePatch(displayName: displayName, preferences: preferences)
            return .profile(try db.run(ProfileService.update(userID, patch)))
        }
        return .removed
    }
}
