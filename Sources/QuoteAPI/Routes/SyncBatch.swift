import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// Applies the queued operations of `POST /v1/sync` in order, each at most once.
///
/// The whole batch is one transaction (one commit, not one per operation): it first claims every operation id
/// in `sync_operations` in one statement, in id order (a concurrent retry of the same batch, on any instance,
/// waits for this one's claims without holding anything this one needs, then reads its results); ids already
/// claimed by an earlier batch answer their stored result. Each claimed operation runs under a savepoint, so
/// one that fails (404, 409, 422) is rolled back alone and its failure is the result remembered; the results are
/// stored before the commit, with the effects. A database failure fails the whole batch (5xx, nothing applied,
/// nothing remembered): the client sends it again.
struct SyncBatch {
    /// One operation's outcome: what its `/v1` route would answer.
    struct Result: Sendable {
        let id: UUID
        let status: Int
        let code: String?
        /// The answer's JSON body, when the route answers with one.
        let object: [UInt8]?
    }

    let pool: PGPool

    /// Results of operations one account keeps (30 days of them): storage stays bounded whatever a client sends.
    /// A batch that would keep more is refused whole (`403 quota_exceeded`); operations already applied still
    /// answer their stored result.
    static let maximumResultsPerUser = 50_000

    func apply(_ operations: [SyncOperation], userID: UUID) async throws -> [Result] {
        guard !operations.isEmpty else { return [] }
        return try await pool.withTransaction { connection in try Self.apply(operations, userID: userID, connection) }
    }

    private static func apply(_ operations: [SyncOperation], userID: UUID, _ connection: PGConnection) throws -> [Result] {
        let ids = Array(Set(operations.map(\.id)))
        // One batch of a user at a time counts against the quota, so two at once cannot overshoot it.
        try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("quota:sync_operations:\(userID)"), 0))")
        let claimed = Set(try connection.query("""
            INSERT INTO sync_operations (user_id, id, status)
            SELECT \(userID), id, 0 FROM unnest(\(ids)::uuid[]) AS claim (id) ORDER BY id
            ON CONFLICT (user_id, id) DO NOTHING RETURNING id
            """).map { try $0.decode("id", as: UUID.self) })
        if !claimed.isEmpty, try connection.query("""
            SELECT count(*)::int8 AS kept FROM (
                SELECT 1 FROM sync_operations WHERE user_id = \(userID) LIMIT \(Self.maximumResultsPerUser + 1)) AS kept
            """)[0].decode("kept", as: Int.self) > Self.maximumResultsPerUser {
            // Thrown inside the transaction: the claims are rolled back with it.
            throw QuotaExceeded(
                quota: "sync_results_per_account",
                message: "an account keeps at most \(Self.maximumResultsPerUser) results of sync operations")
        }
        var results: [UUID: Result] = [:]
        for row in try connection.query("""
            SELECT id, status, code, object FROM sync_operations
            WHERE user_id = \(userID) AND id = ANY(\(ids.filter { !claimed.contains($0) })::uuid[])
            """)
        {
            let id = try row.decode("id", as: UUID.self)
            results[id] = Result(id: id, status: try row.decode("status"), code: try row.decode("code"),
                                 object: try row.decode("object", as: String?.self).map { Array($0.utf8) })
        }
        var applied: [Result] = []
        for operation in operations where results[operation.id] == nil {
            let result: Result
            do {
                result = try connection.transaction { connection in try run(operation, userID: userID, connection) }
            } catch {
                let problem = HTTPError.answering(error)
                if problem.status >= 500 { throw error }
                result = Result(id: operation.id, status: problem.status, code: problem.code, object: nil)
            }
            results[operation.id] = result
            applied.append(result)
        }
        if !applied.isEmpty {
            try connection.query("""
                UPDATE sync_operations s SET status = r.status, code = nullif(r.code, ''), object = nullif(r.object, '')
                FROM unnest(\(applied.map(\.id))::uuid[], \(applied.map(\.status))::int8[], \(applied.map { $0.code ?? "" })::text[],
                            \(applied.map { $0.object.map { String(decoding: $0, as: UTF8.self) } ?? "" })::text[])
                     AS r (id, status, code, object)
                WHERE s.user_id = \(userID) AND s.id = r.id
                """)
        }
        return operations.map { results[$0.id]! }
    }

    /// The operation, answered as its route answers.
    private static func run(_ operation: SyncOperation, userID: UUID, _ connection: PGConnection) throws -> Result {
        var writer = JSONWriter(capacity: 256)
        func answer(_ status: Int, _ write: ((inout JSONWriter) -> Void)? = nil) -> Result {
            write?(&writer)
            return Result(id: operation.id, status: status, code: nil, object: write == nil ? nil : writer.bytes)
        }
        func name(_ value: JSONValue?) throws -> String {
            guard let name = value?.stringValue else {
                throw QuoteVaultError.invalid("name", value == nil ? "is required" : "must be a string")
            }
            return name
        }
        switch operation.action {
        case .favoriteAdd(let quoteID):
            let added = try FavoritesService.add(userID: userID, quoteID: quoteID, connection)
            return answer(added ? 201 : 200) { $0.favorite(quoteID) }
        case .favoriteRemove(let quoteID):
            try FavoritesService.remove(userID: userID, quoteID: quoteID, connection)
            return answer(204)
        case .collectionCreate(let collectionID, let value):
            let collection = try CollectionsService.create(userID: userID, name: try name(value), id: collectionID, connection)
            return answer(201) { $0.collection(collection) }
        case .collectionRename(let collectionID, let value):
            let collection = try CollectionsService.rename(userID: userID, collectionID: collectionID, name: try name(value), connection)
            return answer(200) { $0.collection(collection) }
        case .collectionDelete(let collectionID):
            try CollectionsService.delete(userID: userID, collectionID: collectionID, connection)
            return answer(204)
        case .collectionAddQuote(let collectionID, let quoteID):
            let added = try CollectionsService.addQuote(userID: userID, collectionID: collectionID, quoteID: quoteID, connection)
            return answer(added ? 201 : 200) { $0.collectionQuote(collectionID: collectionID, quoteID: quoteID) }
        case .collectionRemoveQuote(let collectionID, let quoteID):
            try CollectionsService.removeQuote(userID: userID, collectionID: collectionID, quoteID: quoteID, connection)
            return answer(204)
        case .profileUpdate(let displayName, let preferences):
            let user = try ProfileService.update(userID, try ProfilePatch(displayName: displayName, preferences: preferences), connection)
            return answer(200) { $0.user(user) }
        }
    }
}
