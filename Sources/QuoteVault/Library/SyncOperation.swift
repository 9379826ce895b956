import Foundation

/// One queued operation of `POST /v1/sync`, as the client sent it.
///
/// What identifies the target (operation id, kind, `quote_id`, `collection_id`) is checked for the whole batch
/// before anything runs: a batch with any of them missing or malformed is `422` and nothing is applied, as a
/// request with a malformed path never reaches its route. What the matching route reads from its body (`name`,
/// the profile fields) is checked by the operation itself, whose result is then that route's `422`.
public struct SyncOperation: Sendable {
    public static let maximumBatch = 500

    public enum Action: Sendable {
        case favoriteAdd(quoteID: UUID)
        case favoriteRemove(quoteID: UUID)
        case collectionCreate(collectionID: UUID, name: JSONValue?)
        case collectionRename(collectionID: UUID, name: JSONValue?)
        case collectionDelete(collectionID: UUID)
        case collectionAddQuote(collectionID: UUID, quoteID: UUID)
        case collectionRemoveQuote(collectionID: UUID, quoteID: UUID)
        /// The body of `PATCH /v1/me`: a field absent is nil, a field sent as null is `.null`.
        case profileUpdate(displayName: JSONValue?, preferences: JSONValue?)
    }

    public let id: UUID
    public let action: Action

    static let kinds = [
        "favorite.add", "favorite.remove", "collection.create", "collection.rename", "collection.delete",
        "collection.add_quote", "collection.remove_quote", "profile.update",
    ]

    /// Parses `{operations: [...]}`.
    /// - Throws: `422 validation_failed` naming every malformed field of the batch.
    public static func parseBatch(_ body: JSONValue) throws -> [SyncOperation] {
        guard case .object(let object) = body, case .array(let items)? = object["operations"] else {
            throw QuoteVaultError.invalid("operations", "must be an array of operations")
        }
        guard items.count <= maximumBatch else {
            throw QuoteVaultError.invalid("operations", "must hold at most \(maximumBatch) operations")
        }
        var errors: [FieldError] = []
        var operations: [SyncOperation] = []
        for (index, item) in items.enumerated() {
            do {
                operations.append(try parse(item))
            } catch let error as OperationFieldError {
                errors.append(FieldError(field: "operations[\(index)].\(error.field)", message: error.message))
            }
        }
        guard errors.isEmpty else { throw QuoteVaultError.validation(errors) }
        return operations
    }

    private struct OperationFieldError: Error {
        let field: String
        let message: String
    }

    private static func parse(_ item: JSONValue) throws -> SyncOperation {
        guard case .object(let fields) = item else {
            throw OperationFieldError(field: "id", message: "must be in an operation object")
        }
        func uuid(_ name: String) throws -> UUID {
            guard let text = fields[name]?.stringValue, let id = UUID(uuidString: text) else {
                throw OperationFieldError(field: name, message: "must be a UUID")
            }
            return id
        }
        let id = try uuid("id")
        guard let kind = fields["op"]?.stringValue, kinds.contains(kind) else {
            throw OperationFieldError(field: "op", message: "must be one of \(kinds.joined(separator: ", "))")
        }
        let action: Action
        switch kind {
        case "favorite.add": action = .favoriteAdd(quoteID: try uuid("quote_id"))
        case "favorite.remove": action = .favoriteRemove(quoteID: try uuid("quote_id"))
        case "collection.create":
            action = .collectionCreate(collectionID: try uuid("collection_id"), name: fields["name"])
        case "collection.rename":
            action = .collectionRename(collectionID: try uuid("collection_id"), name: fields["name"])
        case "collection.delete": action = .collectionDelete(collectionID: try uuid("collection_id"))
        case "collection.add_quote":
            action = .collectionAddQuote(collectionID: try uuid("collection_id"), quoteID: try uuid("quote_id"))
        case "collection.remove_quote":
            action = .collectionRemoveQuote(collectionID: try uuid("collection_id"), quoteID: try uuid("quote_id"))
        default: action = .profileUpdate(displayName: fields["display_name"], preferences: fields["preferences"])
        }
        return SyncOperation(id: id, action: action)
    }
}
