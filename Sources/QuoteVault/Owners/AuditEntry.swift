import Foundation
import PGClient

/// One row of the audit log as the console shows it.
public struct AuditEntry: Sendable, Equatable {
    public let id: Int64
    public let ownerEmail: String
    public let at: Date
    public let action: String
    public let target: String
    /// The values before and after, as JSON text (nil when the action has none).
    public let before: String?
    public let after: String?
    /// Where the request came from; nil for the command line and rows older than these columns.
    public let clientAddress: String?
    public let userAgent: String?
    /// The row this one reverses (an undo), and the undo that reversed this one.
    public let undoes: Int64?
    public let undoneBy: Int64?

    /// Whether the console offers to undo it: a quote edit or deletion with the values before, not yet undone.
    public var isUndoable: Bool {
        undoneBy == nil && before != nil && QuoteUndo.undoableActions.contains(action)
    }

    init(row: PGRow) throws {
        id = try row.decode("id")
        ownerEmail = try row.decode("owner_email")
        at = try row.decode("at")
        action = try row.decode("action")
        target = try row.decode("target")
        before = try row.decode("before")
        after = try row.decode("after")
        clientAddress = try row.decode("client_address")
        userAgent = try row.decode("user_agent")
        undoes = try row.decode("undoes")
        undoneBy = try row.decode("undone_by")
    }
}
