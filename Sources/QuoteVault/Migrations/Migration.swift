import Foundation

/// One forward-only schema change: `NNNN_name.sql` in the migrations directory.
public struct Migration: Sendable, Equatable {
    /// The file's numeric prefix, e.g. `0001`; migrations apply in this order.
    public let version: String
    public let name: String
    public let sql: String

    /// Reads every `*.sql` file of `directory`, ordered by version. Two files with one version are an error.
    public static func load(from directory: URL) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        var migrations: [Migration] = []
        for file in files {
            let stem = String(file.dropLast(4))
            guard let separator = stem.firstIndex(of: "_"), stem[..<separator].allSatisfy(\.isNumber),
                separator != stem.startIndex
            else { throw MigrationError.badFileName(file) }
            let version = String(stem[..<separator])
            if migrations.last?.version == version { throw MigrationError.duplicateVersion(version) }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            migrations.append(
                Migration(version: version, name: String(stem[stem.index(after: separator)...]), sql: sql))
        }
        return migrations
    }

    /// Finds the `migrations` directory: `explicit` if given, else next to the working directory or to the
    /// executable (or one of its parents, which covers `.build/<config>/quote-server` in a checkout).
    public static func locateDirectory(explicit: String? = nil) throws -> URL {
        if let explicit { return URL(fileURLWithPath: explicit) }
        if let found = ResourceLocator.find("migrations") { return found }
        throw MigrationError.directoryNotFound
    }
}

/// Why migrating failed.
public enum MigrationError: Error, CustomStringConvertible, Equatable {
    case badFileName(String)
    case duplicateVersion(String)
    case directoryNotFound
    case schemaDirectoryNotFound
    case schemaDirectoryEmpty(String)
    /// A migration that was already applied has different content now: never silently skipped.
    case checksumMismatch(version: String, name: String)

    public var description: String {
        switch self {
        case .badFileName(let file): return "migration file \(file) is not named NNNN_name.sql"
        case .duplicateVersion(let version): return "two migrations have version \(version)"
        case .directoryNotFound: return "no migrations directory found (set MIGRATIONS_DIR)"
        case .schemaDirectoryNotFound: return "no schema directory found beside the migrations or the program"
        case .schemaDirectoryEmpty(let path): return "the schema directory \(path) holds no .sql file"
        case .checksumMismatch(let version, let name):
            return "migration \(version)_\(name) was changed after it was applied; add a new migration instead"
        }
    }
}
