import AuthJWT
import Foundation
import PGClient
import Synchronization

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
    /// When the same rows were imported before and cut short: the valid rows already committed then, skipped now.
    public var resumedAfter: Int?
    /// GIN indexes of quotes set aside during the import (by it, or by an earlier one cut short) and built at its
    /// end.
    public var indexesBuilt = 0
}

/// How far an import is, after each committed batch.
public struct ImportProgress: Sendable, Equatable {
    /// Valid rows committed (those of an earlier, interrupted run included).
    public var done: Int
    public var total: Int
    /// Rows committed by this run, and the time it took.
    public var doneNow: Int
    public var elapsed: Duration
    /// Once every row is in: the indexes set aside that are now being built (0 while rows go in).
    public var indexesToBuild = 0
}

/// Loads quotes into the database: validates each row, then sends the valid ones in batches, each COPYed into a
/// temporary table and inserted from there in one transaction (the unique index on (text, author) skips what is
/// already there; the word index and vocabulary are kept once per batch). Each batch commits with the import's
/// progress (`quote_imports`): an import cut short loses only its batch in flight, which rolls back whole, and
/// the same rows imported again resume after the last committed batch.
///
/// An import can set the GIN indexes of quotes aside (migration 0049) and build them once at its end, on as many
/// of the pool's connections at once as it has (up to two): far less work than keeping them row by row. Searches
/// meanwhile read the table without those indexes (right, but slower), so by default (`IndexDeferral.auto`) only an
/// import of at least `deferIndexesFrom` rows into an empty table does, when nothing is served from it yet. Indexes
/// set aside are built at the end of the import, also when it is interrupted or fails, and at the end of any later
/// import if it was killed.
///
/// Such an import also sets aside, for its own sessions, the vocabulary's counts and the window of newest words
/// (migration 0057): each batch counts its words into a table of its own, so the batches go in on every connection
/// of the pool side by side (`insertBatches`), and the counts join the vocabulary at the end (also when it is
/// interrupted or fails, and at the end of any later import if it was killed). Until then a search does not find
/// the imported words. A run resuming an import that set them aside goes on the same way.
public struct QuoteImporter: Sendable {
    public static let maximumTextLength = 300
    public static let maximumAuthorLength = 200
    public static let defaultBatchSize = 10_000
    public static let deferIndexesFrom = 50_000

    /// A record that passed `validate`, normalised.
    public typealias ValidRow = (text: String, author: String, category: QuoteCategory)

    /// When an import sets the GIN indexes aside.
    public enum IndexDeferral: String, Sendable, CaseIterable {
        /// Into an empty table, with at least `deferIndexesFrom` rows to insert.
        case auto
        /// Never: every row keeps every index as it goes in.
        case never
        /// Always, even while searches are served from the table (they scan it until the import ends).
        case always
    }

    let pool: PGPool
    let batchSize: Int
    private let deferral: IndexDeferral
    /// With `.auto`, how many rows an import into an empty table needs to set the indexes aside.
    private let deferFrom: Int

    public init(
        pool: PGPool, batchSize: Int = Self.defaultBatchSize, deferral: IndexDeferral = .auto,
        deferFrom: Int = Self.deferIndexesFrom
    ) {
        self.pool = pool
        self.batchSize = batchSize
        self.deferral = deferral
        self.deferFrom = deferFrom
    }

    /// Validates and normalises one record: whitespace collapsed and trimmed, text 1…300 characters,
    /// author 1…200, category one of the five (case-insensitive).
    public static func validate(_ record: QuoteRecord) -> Result<ValidRow, RejectedRow> {
        func reject(_ reason: String) -> Result<ValidRow, RejectedRow> {
            .failure(RejectedRow(line: record.line, reason: reason))
        }
        let text = normaliseWhitespace(record.text ?? "")
        let author = normaliseWhitespace(record.author ?? "")
        guard !text.isEmpty else { return reject("text is missing or empty") }
        guard (isNormalisedASCII(text) ? text.utf8.count : text.count) <= maximumTextLength else {
            return reject("text is longer than \(maximumTextLength) characters")
        }
        guard !author.isEmpty else { return reject("author is missing or empty") }
        guard (isNormalisedASCII(author) ? author.utf8.count : author.count) <= maximumAuthorLength else {
            return reject("author is longer than \(maximumAuthorLength) characters")
        }
        guard
            let category = QuoteCategory(
                rawValue: (record.category ?? "").trimmingCharacters(in: .whitespaces).lowercased())
        else {
            return reject("category must be one of \(QuoteCategory.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return .success((text, author, category))
    }

    /// Collapses every run of Unicode whitespace to one space, and trims.
    public static func normaliseWhitespace(_ text: String) -> String {
        if isNormalisedASCII(text) { return text }
        return text.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
    }

    /// Printable ASCII with single inner spaces only: already normalised (most rows of a bulk import), and its
    /// length in characters is its length in bytes.
    static func isNormalisedASCII(_ text: String) -> Bool {
        var previousSpace = true
        for byte in text.utf8 {
            guard byte >= 0x20, byte < 0x7F else { return false }
            let space = byte == UInt8(ascii: " ")
            if space && previousSpace { return false }
            previousSpace = space
        }
        return !previousSpace
    }

    /// Imports `records`; rejected rows are reported, valid ones kept. `progress` is called after each batch;
    /// when it throws, the import stops there (what was committed stays, and a later run resumes after it).
    public func importRecords(
        _ records: [QuoteRecord], progress: @Sendable (ImportProgress) throws -> Void = { _ in }
    ) async throws -> ImportReport {
        var report = ImportReport()
        var valid: [ValidRow] = []
        for record in records {
            switch Self.validate(record) {
            case .success(let quote): valid.append(quote)
            case .failure(let rejection): report.rejected.append(rejection)
            }
        }
        let key = Self.key(of: valid)
        let total = valid.count
        let done = try await pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO quote_imports AS i (key, total) VALUES (\(key), \(total))
                ON CONFLICT (key) DO UPDATE SET updated_at = now() RETURNING i.done
                """)[0].decode("done", as: Int.self)
        }
        if done > 0 { report.resumedAfter = done }
        let decide = deferral == .always || (deferral == .auto && total - done >= deferFrom)
        let always = deferral == .always
        // Set aside by this run, or by an earlier run of the same rows that was killed: the batches go in side by
        // side (migration 0057).
        let bulk = try await pool.withTransaction { connection in
            if decide {
                // Serialised with other imports deciding the same; by default a table that is not empty keeps them.
                try connection.execute(unsafeSQL: "LOCK TABLE quote_import_deferred_indexes IN EXCLUSIVE MODE")
                try connection.query(
                    "SELECT quote_import_set_aside(\(key)) WHERE \(always) OR NOT EXISTS (SELECT 1 FROM quotes)")
            }
            return try connection.query(
                "SELECT EXISTS (SELECT 1 FROM quote_import_deferred_upkeep WHERE import_key = \(key)) AS bulk"
            )[0].decode("bulk", as: Bool.self)
        }
        let clock = ContinuousClock()
        let started = clock.now
        do {
            try await insertBatches(valid, key: key, from: done, bulk: bulk, report: &report) { start in
                try progress(
                    ImportProgress(
                        done: start, total: total, doneNow: start - done, elapsed: clock.now - started))
            }
        } catch {
            // Stopped or failed: the committed rows stay, with their words and their indexes.
            _ = try? await finishSetAside { _ in }
            throw error
        }
        report.indexesBuilt = try await finishSetAside { count in
            // Every row is in: an interruption now changes nothing, so the building is shown and not stopped.
            try? progress(
                ImportProgress(
                    done: total, total: total, doneNow: total - done, elapsed: clock.now - started,
                    indexesToBuild: count))
        }
        // (A build above analyzed the table already.)
        let analyze = report.indexesBuilt == 0 && report.inserted > 0 ? report.inserted : nil
        try await pool.withConnection { connection in
            try connection.query("DELETE FROM quote_imports WHERE key = \(key)")
            if let analyze { try Self.analyzeIfStale(connection, analyze) }
        }
        return report
    }

    /// Refreshes the planner's statistics of `quotes` when `inserted` rows are a tenth of it or more, or it was
    /// never analyzed: autovacuum takes a minute or more to notice, and meanwhile searches are planned for the table
    /// as it was (bench/README.md, "Session 41: statistics after an import").
    private static func analyzeIfStale(_ connection: PGConnection, _ inserted: Int) throws {
        let stale = try connection.query(
            """
            SELECT c.reltuples < 0 OR \(Double(inserted)) * 10 >= c.reltuples AS stale
            FROM pg_class c WHERE c.oid = 'quotes'::regclass
            """)[0].decode("stale", as: Bool.self)
        if stale { try connection.execute(unsafeSQL: "ANALYZE quotes") }
    }

    /// Finishes what an import set aside (this one, or one cut short): the vocabulary's counts and the window of
    /// newest words (migration 0057) beside the first index build, and every index (migration 0049), two at a time
    /// when the pool has two connections; then refreshes the table's statistics for the planner. Returns how many
    /// indexes were built; `starting` is told how many before the first build.
    private func finishSetAside(starting: @Sendable (Int) -> Void) async throws -> Int {
        let names = try await pool.withConnection { connection in
            try connection.query("SELECT name FROM quote_import_deferred_indexes ORDER BY name").map {
                try $0.decode("name", as: String.self)
            }
        }
        if !names.isEmpty { starting(names.count) }
        let pool = self.pool
        // The texts' indexes (the largest) first, each builder taking the next when it is done.
        let queue = EndQueue([.upkeep] + names.sorted(by: >).map { .index($0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<(names.isEmpty ? 1 : min(2, pool.stats.size)) {
                group.addTask {
                    while let work = queue.next() {
                        try await pool.withTransaction { connection in
                            switch work {
                            case .upkeep: try connection.query("SELECT quote_import_finish_upkeep()")
                            case .index(let name): try connection.query("SELECT quote_import_build_index(\(name))")
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        guard !names.isEmpty else { return 0 }
        try await pool.withConnection { connection in
            // The words counted aside are deleted: their pages go back to the disk at once.
            try connection.execute(unsafeSQL: "VACUUM quote_import_words")
            try connection.execute(unsafeSQL: "ANALYZE quotes")
        }
        return names.count
    }

    /// What is left to do at an import's end.
    private enum EndWork: Sendable {
        case upkeep
        case index(String)
    }

    /// The end's work handed out one at a time to the builders.
    private final class EndQueue: Sendable {
        private let work: Mutex<[EndWork]>
        init(_ work: [EndWork]) { self.work = Mutex(work.reversed()) }
        func next() -> EndWork? { work.withLock { $0.popLast() } }
    }

    /// The digest of the valid rows in order: the same rows imported again find their earlier progress.
    static func key(of rows: [ValidRow]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rows.count * 160)
        for row in rows {
            for field in [row.text, row.author, row.category.rawValue] {
                bytes.append(contentsOf: field.utf8)
                bytes.append(0)
            }
        }
        return Digest.sha256Hex(bytes)
    }

    /// Rows in COPY's text format: position, text, author, category, tab-separated, with `\`, tab, newline and
    /// carriage return escaped.
    static func copyText(_ rows: ArraySlice<ValidRow>, firstPosition: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * 160)
        func field(_ text: String) {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                default: out.append(byte)
                }
            }
        }
        for (offset, row) in rows.enumerated() {
            out += Array(String(firstPosition + offset).utf8)
            out.append(UInt8(ascii: "\t"))
            field(row.text)
            out.append(UInt8(ascii: "\t"))
            field(row.author)
            out.append(UInt8(ascii: "\t"))
            out += Array(row.category.rawValue.utf8)
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }
}
