/// An edit made against a version of the quote that another writer has changed since the form was opened:
/// nothing was saved; `current` is what the other writer saved.
public struct QuoteEditConflict: Error, Sendable {
    public let current: EditableQuote
}
