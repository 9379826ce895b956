import Foundation

/// A quote's fields as an audit row keeps them (console rows and `/rest/v1` rows alike), compared by text,
/// author and category.
struct AuditedQuoteFields: Equatable {
    let text: String
    let author: String
    let category: String
    /// Kept by deletions; not compared.
    let createdAt: String?

    init(_ quote: Quote) {
        (text, author, category, createdAt) = (quote.text, quote.author, quote.category, nil)
    }

    init(json: String) throws {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
        guard let text = object["text"] as? String, let author = object["author"] as? String,
            let category = object["category"] as? String
        else { throw Failure.conflict("The audit row lacks a quote's text, author or category; it cannot be undone.") }
        (self.text, self.author, self.category) = (text, author, category)
        createdAt = object["created_at"] as? String
    }

    var record: QuoteRecord { QuoteRecord(line: 1, text: text, author: author, category: category) }

    static func == (left: AuditedQuoteFields, right: AuditedQuoteFields) -> Bool {
        (left.text, left.author, left.category) == (right.text, right.author, right.category)
    }
}
