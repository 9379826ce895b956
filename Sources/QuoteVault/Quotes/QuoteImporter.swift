import Foundation
import PGClient

/// One quote read from a file, before validation, with the line it started on.
public struct QuoteRecord: Sendable, Equatable {
    public var line: Int
    public var text: String?
    public var author: String?
    public var category: String?

    public init(line: Int, text: String? = nil, author: String? = nil, category: String? = nil) {
        self.line = line
        self.text = text
        self.author = author
        self.category = category
    }
}

/// A row that was refused, and why.
public struct RejectedRow: Error, Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    public let reason: String
    public var description: String { "line \(line): \(reason)" }
}

/// What an import did.
public struct ImportReport: Sendable, Equatable {
    public var inserted = 0
    /// Valid rows that were already there (same text and author): never inserted twice.
    public var duplicates = 0
    public var rejected: [RejectedRow] = []
}

/// Loads quotes into the database: validates each row, inserts the valid ones in batches (one transaction
/// per batch), and lets the unique index on (text, author) skip what is already there.
public struct QuoteImporter: Sendable {
    public static let maximumTextLength = 300
    public static let maximumAuthorLength = 200
    public static let batchSize = 500

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Validates and normalises one record: whitespace collapsed and trimmed, text 1…300 characters,
    /// author 1…200, category one of the five (case-insensitive).
    public static func validate(_ record: QuoteRecord) -> Result<(text: String, author: String, category: QuoteCategory), RejectedRow> {
        func reject(_ reason: String) -> Result<(text: String, author: String, category: QuoteCategory), RejectedRow> {
            .failure(RejectedRow(line: record.line, reason: reason))
        }
        let text = normaliseWhitespace(record.text ?? "")
        let author = normaliseWhitespace(record.author ?? "")
        guard !text.isEmpty else { return reject("text is missing or empty") }
        guard text.count <= maximumTextLength else { return reject("text is longer than \(maximumTextLength) characters") }
        guard !author.isEmpty else { return reject("author is missing or empty") }
        guard author.count <= maximumAuthorLength else { return reject("author is longer than \(maximumAuthorLength) characters") }
        guard let category = QuoteCategory(rawValue: (record.category ?? "").trimmingCharacters(in: .whitespaces).lowercased()) else {
            return reject("category must be one of \(QuoteCategory.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return .success((text, author, category))
    }

    /// Collapses every run of Unicode whitespace to one space, and trims.
    public static func normaliseWhitespace(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
    }

    /// Imports `records`; rejected rows are reported, valid ones kept.
    public func importRecords(_ records: [QuoteRecord]) async throws -> ImportReport {
        var report = ImportReport()
        var valid: [(text: String, author: String, category: QuoteCategory)] = []
        for record in records {
            switch Self.validate(record) {
            case .success(let quote): valid.append(quote)
            case .failure(let rejection): report.rejected.append(rejection)
            }
        }
        var start = 0
        while start < valid.count {
            let batch = Array(valid[start..<min(start + Self.batchSize, valid.count)])
            let inserted = try await pool.withTransaction { connection in
                // Row order gives distinct, decreasing created_at within a batch, so a file's first quote is newest.
                try connection.query("""
                    INSERT INTO quotes (text, author, category, created_at)
                    SELECT t.text, t.author, t.category, now() - t.position * interval '1 microsecond'
                    FROM unnest(\(batch.map(\.text))::text[], \(batch.map(\.author))::text[], \(batch.map(\.category.rawValue))::text[])
                         WITH ORDINALITY AS t (text, author, category, position)
                    ON CONFLICT DO NOTHING
                    """).affectedRows
            }
            report.inserted += inserted
            report.duplicates += batch.count - inserted
            start += Self.batchSize
        }
        return report
    }
}
