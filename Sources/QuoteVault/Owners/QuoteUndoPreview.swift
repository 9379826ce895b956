import Foundation

/// What an undo from the audit log would do, as its confirmation page shows it: the quote's fields now and after.
public struct QuoteUndoPreview: Sendable, Equatable {
    /// A quote's fields an undo compares and restores.
    public struct Fields: Sendable, Equatable {
        public let text: String
        public let author: String
        public let category: String
    }

    /// The audit row undone.
    public let entryID: Int64
    public let action: String
    public let quoteID: UUID
    /// The quote once undone: the row's values before.
    public let restored: Fields
    /// The quote now; nil when the row deleted it (the undo brings it back, under its id).
    public let current: Fields?
}
