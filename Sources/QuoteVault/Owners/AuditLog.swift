import Foundation
import PGClient

/// The owners' audit log: every console action, who, when, what and on what, with the values before and after.
public struct AuditLog: Sendable {
    public static let pageSize = 50

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Writes one row inside the caller's transaction, so the row exists exactly when the change does.
    /// - Parameters:
    ///   - version: the row version the change left on its quote (what an undo checks is still there).
    ///   - undoes: the row this change reverses.
    public static func record(
        _ actor: AuditActor, action: String, target: String, before: [String: String]? = nil,
        after: [String: String]? = nil, version: String? = nil, undoes: Int64? = nil, _ connection: PGConnection
    ) throws {
        let beforeJSON = try before.map { try PGJSON(encoding: $0).text }
        let afterJSON = try after.map { try PGJSON(encoding: $0).text }
        try connection.query(
            """
            INSERT INTO console_audit (owner_id, owner_email, action, target, before, after, client_address, user_agent,
                                       version, undoes)
            VALUES (\(actor.ownerID), \(actor.email), \(action), \(target), \(beforeJSON)::jsonb, \(afterJSON)::jsonb,
                    \(actor.client?.address), \(actor.client?.userAgent), \(version), \(undoes))
            """)
    }

    /// Rows newest first, filtered by owner email (substring), action (exact) and text anywhere in the row.
    /// - Returns: the page and whether more rows follow.
    public func search(owner: String?, action: String?, text: String?, page: Int) async throws
        -> (entries: [AuditEntry], hasMore: Bool)
    {
        // The page's ids first, skipping rows by the time index alone; only its rows are then read whole (an
        // OFFSET over whole rows would compute every skipped row's values).
        var ids: PGQuery = "SELECT id FROM console_audit WHERE true"
        ids.append(Self.conditions(owner: owner, action: action, text: text))
        ids.append(" ORDER BY at DESC, id DESC LIMIT \(Self.pageSize + 1) OFFSET \(max(0, page - 1) * Self.pageSize)")
        var query: PGQuery = "SELECT \(unsafeSQL: Self.columns) FROM console_audit WHERE id IN ("
        query.append(ids)
        query.append(") ORDER BY at DESC, id DESC")
        let rows = try await pool.query(query)
        let entries = try rows.prefix(Self.pageSize).map(AuditEntry.init(row:))
        return (entries, rows.count > Self.pageSize)
    }

    /// Where an export stopped: the time (as text, to the microsecond) and id of the last row it read.
    public struct Cursor: Sendable, Equatable {
        fileprivate let at: String
        fileprivate let id: Int64
    }

    /// The next `limit` rows `search` filters after `cursor` (from the newest with none), newest first, for an
    /// export that reads the whole log a page at a time (each page sought by the time index).
    /// - Returns: the rows and the cursor after them; nil when there are no more.
    public func export(owner: String?, action: String?, text: String?, after cursor: Cursor?, limit: Int)
        async throws -> (entries: [AuditEntry], next: Cursor?)
    {
        var query = Self.filtered(owner: owner, action: action, text: text, after: cursor)
        query.append(" LIMIT \(limit)")
        let rows = try await pool.query(query)
        let next = try rows.last.map { Cursor(at: try $0.decode("at_key"), id: try $0.decode("id")) }
        return (try rows.map(AuditEntry.init(row:)), rows.count < limit ? nil : next)
    }

    private static let columns = """
        id, owner_email, at, at::text AS at_key, action, target, before::text AS before, after::text AS after,
        client_address, user_agent, undoes,
        (SELECT undo.id FROM console_audit undo WHERE undo.undoes = console_audit.id) AS undone_by
        """

    private static func filtered(owner: String?, action: String?, text: String?, after cursor: Cursor?) -> PGQuery {
        var query: PGQuery = "SELECT \(unsafeSQL: columns) FROM console_audit WHERE true"
        query.append(conditions(owner: owner, action: action, text: text))
        if let cursor { query.append(" AND (at, id) < (\(cursor.at)::timestamptz, \(cursor.id))") }
        query.append(" ORDER BY at DESC, id DESC")
        return query
    }

    /// Owner email (substring), action (exact) and text anywhere in the row; empty filters match everything.
    private static func conditions(owner: String?, action: String?, text: String?) -> PGQuery {
        var query: PGQuery = ""
        if let owner, !owner.isEmpty { query.append(" AND lower(owner_email) LIKE \(Self.contains(owner))") }
        if let action, !action.isEmpty { query.append(" AND action = \(action)") }
        if let text, !text.isEmpty { query.append(" AND search_text LIKE \(Self.contains(text))") }
        return query
    }

    /// The actions that occur in the log, for the filter's choices.
    public func actions() async throws -> [String] {
        // One index probe per action (console_audit_action_idx), not a scan of the whole log (DISTINCT would).
        try await pool.query(
            """
            WITH RECURSIVE found AS (
                SELECT min(action) AS action FROM console_audit
                UNION ALL
                SELECT (SELECT min(action) FROM console_audit WHERE action > found.action) FROM found
                WHERE found.action IS NOT NULL)
            SELECT action FROM found WHERE action IS NOT NULL ORDER BY action
            """
        ).map { try $0.decode("action") }
    }

    /// `%text%` in lower case, with LIKE's wildcards escaped (they match themselves).
    static func contains(_ text: String) -> String {
        "%" + QuoteSearch.escapeLike(text.lowercased()) + "%"
    }
}
