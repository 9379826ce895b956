/// Column names of a result, shared by all its rows.
final class PGColumns: Sendable {
    let names: [String]
    /// Only for wide results: hashing a name costs more than comparing it with a handful of others
    /// (perf showed the hasher on every decoded row of a page of quotes).
    private let wideIndexes: [String: Int]?
    private static let linearSearchLimit = 16

    init(names: [String]) {
        self.names = names
        // With duplicate names (e.g. two joined "id"s) the first wins, as in most drivers.
        wideIndexes =
            names.count > Self.linearSearchLimit
            ? Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first }) : nil
    }

    /// The position of the first column called `name`.
    func index(of name: String) -> Int? {
        if let wideIndexes { return wideIndexes[name] }
        return names.firstIndex(of: name)
    }
}

/// One result row, fully materialised in text format: usable after the connection moved on.
public struct PGRow: Sendable {
    let columns: PGColumns
    let values: [String?]

    /// Decodes the named column. NULL decodes as `nil` for optionals and throws otherwise;
    /// an unknown column or unparseable value throws a `PGError` naming the column.
    public func decode<T: PGDecodable>(_ column: String, as type: T.Type = T.self) throws(PGError) -> T {
        guard let index = columns.index(of: column) else {
            throw PGError(kind: .decoding, message: "no such column in the result", column: column)
        }
        return try decode(at: index, as: type)
    }

    /// Decodes the column at `index` (0-based).
    public func decode<T: PGDecodable>(at index: Int, as type: T.Type = T.self) throws(PGError) -> T {
        guard values.indices.contains(index) else {
            throw PGError(
                kind: .decoding, message: "no column at index \(index); the row has \(values.count)",
                column: "#\(index)")
        }
        do {
            if let text = values[index] {
                return try T(pgText: text)
            }
            return try T.pgDecodeNull()
        } catch {
            var named = error
            named.column = columns.names[index]
            throw named
        }
    }

    /// Whether the named column is NULL (false for unknown columns).
    public func isNull(_ column: String) -> Bool {
        guard let index = columns.index(of: column) else { return false }
        return values[index] == nil
    }
}

/// A statement's materialised result: its rows, column names and affected-row count.
public struct PGRows: Sendable, RandomAccessCollection {
    let columnSet: PGColumns
    let rows: [PGRow]
    /// Rows inserted, updated, deleted, selected, ... as reported by the server (0 if none).
    public let affectedRows: Int
    /// The command tag, e.g. "INSERT 0 1" or "SELECT 3".
    public let commandTag: String

    /// The result's column names, in order.
    public var columns: [String] { columnSet.names }

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> PGRow { rows[position] }
}
