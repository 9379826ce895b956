import Foundation
import HTTPServer
import PGClient
import QuoteVault

/// Applies the queued operations of `POST /v1/sync` in order, each at most once.
///
/// Each operation runs in its own transaction that first claims its id in `sync_operations` (a repeated id,
/// in this batch, a later one, or one running concurrently on another instance, finds the claim and gets the
/// stored result instead) and records its result before committing: the effect and the memory of it commit
/// together. The operation itself runs under a savepoint, so one that fails (404, 409, 422) is rolled back
/// alone and its failure is the remembered result. A 5xx is not remembered: the operation may be retried.
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

    func apply(_ operations: [SyncOperation], userID: UUID) async throws -> [Result] {
        try await pool.withConnection { connection in
            operations.map { operation in
                do {
                    return try connection.transaction { connection in
                        try Self.applyOnce(operation, userID: userID, connection)
                    }
                } catch {
                    let problem = HTTPError.answering(error)
                    return Result(id: operation.id, status: problem.status, code: problem.code, object: nil)
                }
            }
        }
    }

    private static func applyOnce(_ operation: SyncOperation, userID: UUID, _ connection: PGConnection) throws -> Result {
        let claimed = try connection.query("""
            INSERT INTO sync_operations (user_id, id, status) VALUES (\(userID), \(operation.id), 0)
            ON CONFLICT (user_id, id) DO NOTHING
            """).affectedRows == 1
        guard claimed else {
            let row = try connection.query("""
                SELECT status, code, object FROM sync_operations WHERE user_id = \(userID) AND id = \(operation.id)
                """)[0]
            return Result(id: operation.id, status: try row.decode("status"), code: try row.decode("code"),
                          object: try row.decode("object", as: String?.self).map { Array($0.utf8) })
        }
        let result: Result
        do {
            result = try connection.transaction { connection in try run(operation, userID: userID, connection) }
        } catch {
            let problem = HTTPError.answering(error)
            // Rolls the claim back with the transaction: a database failure is not an answer to remember.
            if problem.status >= 500 { throw error }
            result = Result(id: operation.id, status: problem.status, code: problem.code, object: nil)
        }
        try connection.query("""
            UPDATE sync_operations SET status = \(result.status), code = \(result.code),
                object = \(result.object.map { String(decoding: $0, as: UTF8.self) })
            WHERE user_id = \(userID) AND id = \(operation.id)
            """)
        return result
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
