import Foundation
import PGClient

/// An uploaded quotes file between its preview and its import, and then the import's progress.
public struct ImportDraft: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Checked and shown; nothing saved yet.
        case preview
        /// Confirmed: being saved batch by batch.
        case importing
        case done
        case failed
    }

    /// One row of the file with its verdict: the values as they will be saved, or why it will not be (stored as
    /// JSON, one object a row).
    public struct Row: Sendable, Equatable, Encodable {
        public let line: Int
        public let text: String
        public let author: String
        public let category: String
        public let error: String?
    }

    public let id: UUID
    public let fileName: String
    public let state: State
    public let total: Int
    public let valid: Int
    /// Good rows saved so far (or found already there).
    public let processed: Int
    public let inserted: Int
    public let duplicates: Int
    /// Importing, without progress for a minute: the server that ran it stopped; it may be resumed.
    public let isStalled: Bool

    public var rejected: Int { total - valid }

    static let columns =
        "id, file_name, state, total, valid, processed, inserted, duplicates, "
        + "state = 'importing' AND updated_at < now() - interval '1 minute' AS stalled"

    init(row: PGRow) throws {
        id = try row.decode("id")
        fileName = try row.decode("file_name")
        state = State(rawValue: try row.decode("state")) ?? .failed
        total = try row.decode("total")
        valid = try row.decode("valid")
        processed = try row.decode("processed")
        inserted = try row.decode("inserted")
        duplicates = try row.decode("duplicates")
        isStalled = try row.decode("stalled")
    }
}
