/// A search query as given by a client, validated and normalised once: trimmed, 1…200 characters. Two queries
/// that differ only in surrounding white space are equal (one answer, one cache entry).
public struct SearchQuery: Hashable, Sendable {
    public static let maximumLength = 200

    public let text: String

    public init(_ raw: String?) throws {
        // Unicode's White_Space, the set of Foundation's `.whitespacesAndNewlines`, whose trimming is slow on Linux.
        let scalars = (raw ?? "").unicodeScalars
        let start = scalars.firstIndex { !$0.properties.isWhitespace } ?? scalars.endIndex
        let end = scalars[start...].lastIndex { !$0.properties.isWhitespace }.map(scalars.index(after:)) ?? start
        let trimmed = String(scalars[start..<end])
        guard !trimmed.isEmpty else { throw QuoteVaultError.invalid("q", "must not be empty") }
        guard trimmed.unicodeScalars.count <= Self.maximumLength else {  // code points, as JSON Schema counts
            throw QuoteVaultError.invalid("q", "must be at most \(Self.maximumLength) characters")
        }
        text = trimmed
    }
}
