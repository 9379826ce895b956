import ArgumentParser
import Foundation
import Logging
import PGClient
import QuoteVault
import Synchronization

/// Imports the bundled corpus of real quotes; a second run adds nothing.
struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Import the bundled corpus of real quotes (idempotent).")

    @OptionGroup var options: ServerOptions
    @Option(help: "The corpus file (default: data/quotes.jsonl found beside the program).")
    var corpus: String?

    func run() async throws {
        let logger = try options.makeLogger()
        guard let file = corpus.map({ URL(fileURLWithPath: $0) }) ?? ResourceLocator.find("data/quotes.jsonl") else {
            throw ValidationError("the bundled corpus data/quotes.jsonl was not found; pass --corpus")
        }
        let report = try await QuoteLoading.load(file, options: options, logger: logger)
        guard report.rejected.isEmpty else {
            throw ValidationError(
                "the bundled corpus has \(report.rejected.count) invalid rows, e.g. \(report.rejected[0])")
        }
    }
}

/// Imports quotes from a JSON array or CSV file of {text, author, category}.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Import quotes from a JSON array or CSV of {text, author, category}; invalid rows are reported and skipped."
    )

    @OptionGroup var options: ServerOptions
    @Argument(help: "The file to import (.json array, .jsonl, or .csv with a header row).")
    var file: String
    @Option(
        help: """
            When to set the search indexes aside and build them at the end: auto (into an empty table, \
            \(QuoteImporter.deferIndexesFrom) rows or more), never, always (searches scan the table meanwhile).
            """)
    var deferIndexes: QuoteImporter.IndexDeferral = .auto

    func run() async throws {
        let logger = try options.makeLogger()
        _ = try await QuoteLoading.load(
            URL(fileURLWithPath: file), options: options, logger: logger, deferral: deferIndexes)
    }
}

/// What seed and import share: migrate, read, import, report.
enum QuoteLoading {
    static func load(
        _ file: URL, options: ServerOptions, logger: Logger, deferral: QuoteImporter.IndexDeferral = .auto
    ) async throws -> ImportReport {
        let records: [QuoteRecord]
        do {
            records = try QuoteFileReader.read(file)
        } catch let error as QuoteFileReader.ReadError {
            throw ValidationError(error.description)
        }
        // A connection per core (two at least): an import into an empty table sends its batches on all of them
        // side by side, and builds the indexes it set aside two at a time.
        let connections = max(2, ProcessInfo.processInfo.activeProcessorCount)
        return try await Database.withMigrated(options, logger: logger, poolSize: connections) { pool, _ in
            try await importing(records, from: file, into: pool, logger: logger, deferral: deferral)
        }
    }

    private static func importing(
        _ records: [QuoteRecord], from file: URL, into pool: PGPool, logger: Logger,
        deferral: QuoteImporter.IndexDeferral
    ) async throws -> ImportReport {
        let line = ProgressLine()
        let interruption = ImportInterruption(logger: logger)
        let report: ImportReport
        do {
            report = try await QuoteImporter(pool: pool, deferral: deferral).importRecords(records) { progress in
                line.show(progress)
                try interruption.check()
            }
        } catch let stop as ImportInterruption.Interrupted {
            line.end()
            logger.warning(
                "import interrupted after its last committed batch; those rows stay; run it again to resume",
                metadata: [
                    "rows_committed": .stringConvertible(line.lastDone), "signal": .stringConvertible(stop.signal),
                ])
            throw ExitCode(128 + stop.signal)
        } catch {
            line.end()
            // Each committed batch stays; the one in flight rolled back whole.
            logger.error(
                "import stopped; its committed batches stay, the batch in flight rolled back; run it again to resume",
                metadata: ["rows_committed": .stringConvertible(line.lastDone), "error": .string("\(error)")])
            throw error
        }
        line.end()
        if report.indexesBuilt > 0 {
            logger.info(
                "search indexes set aside during the import built again",
                metadata: ["indexes": .stringConvertible(report.indexesBuilt)])
        }
        if let resumedAfter = report.resumedAfter {
            logger.info(
                "resumed an interrupted import of these rows",
                metadata: ["rows_already_committed": .stringConvertible(resumedAfter)])
        }
        for rejection in report.rejected {
            logger.warning(
                "row skipped",
                metadata: ["line": .stringConvertible(rejection.line), "reason": .string(rejection.reason)])
        }
        logger.info(
            "quotes imported",
            metadata: [
                "file": .string(file.lastPathComponent), "inserted": .stringConvertible(report.inserted),
                "already_present": .stringConvertible(report.duplicates),
                "rejected": .stringConvertible(report.rejected.count),
            ])
        return report
    }
}

/// One line on a terminal's stderr, rewritten after each batch: rows done, rows per second, time left. Nothing
/// when stderr is not a terminal (logs and pipes get the final report only).
final class ProgressLine: Sendable {
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let done = Mutex(0)

    var lastDone: Int { done.withLock { $0 } }

    func show(_ progress: ImportProgress) {
        done.withLock { $0 = progress.done }
        guard isTerminal else { return }
        if progress.indexesToBuild > 0 {
            let text = "\r\(progress.done) / \(progress.total) rows in; building \(progress.indexesToBuild) indexes   "
            FileHandle.standardError.write(Data(text.utf8))
            return
        }
        let seconds = progress.elapsed / .seconds(1)
        let rate = seconds > 0 ? Double(progress.doneNow) / seconds : 0
        let left = rate > 0 ? Int(Double(progress.total - progress.done) / rate) : 0
        let text =
            "\r\(progress.done) / \(progress.total) rows  \(Int(rate)) rows/s  "
            + "\(left / 60)m\(left % 60)s left   "
        FileHandle.standardError.write(Data(text.utf8))
    }

    func end() {
        if isTerminal, lastDone > 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

extension QuoteImporter.IndexDeferral: ExpressibleByArgument {}
