internal import CLibPQ

/// The named prepared statements one connection has created, by SQL text and parameter types.
///
/// A pooled connection runs the same few statements again and again. Prepared once, each later run skips the
/// database's parsing and analysis, and after a few runs PostgreSQL may keep a generic plan and skip planning too:
/// pgbench runs a one-row read much faster with `-M prepared` than with `-M extended`, and a keyset page deep in the
/// list as fast as the first page (with `-M extended` it pays for planning the row comparison; bench/README.md).
///
/// Bounded: past `capacity` distinct statements, new ones run unnamed (PQsendQueryParams), so a caller building
/// many different SQL texts cannot grow the server's memory without limit. Names are never reused, so a
/// statement the database never created (skipped in a failed pipeline) cannot collide with a later one.
struct PreparedStatements {
    struct Key: Hashable {
        let sql: String
        let types: [Oid]
    }

    /// At most this many statements per connection, unless the pool says otherwise.
    static let defaultCapacity = 128

    /// At most this many statements on this connection; 0 runs every statement unnamed (behind PgBouncer's
    /// transaction pooling, where the next transaction may run on another server connection).
    let capacity: Int

    init(capacity: Int = Self.defaultCapacity) { self.capacity = capacity }

    private var names: [Key: String] = [:]
    private var lastNumber = 0

    /// The name of `key`'s statement, if the database has confirmed it.
    func name(of key: Key) -> String? { names[key] }

    /// A fresh name for a statement about to be prepared; nil when the cache is full.
    mutating func newName() -> String? {
        guard names.count < capacity else { return nil }
        lastNumber += 1
        return "qv_\(lastNumber)"
    }

    /// Records a statement once the database has answered its prepare with success.
    mutating func confirm(_ key: Key, name: String) {
        names[key] = name
    }

    /// Forgets a statement the database no longer accepts (deallocated, or its result type changed with the
    /// schema), so the next run prepares it again under a new name.
    mutating func forget(_ key: Key) {
        names[key] = nil
    }

    /// Whether `error` means the named statement itself is no longer usable, rather than the run failing.
    static func invalidates(_ error: PGError) -> Bool {
        // 26000: the statement does not exist; 0A000: "cached plan must not change result type".
        error.sqlState == "26000" || error.sqlState == "0A000"
    }
}
