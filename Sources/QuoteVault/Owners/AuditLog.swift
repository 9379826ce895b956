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
        var query = Self.filtered(owner: owner, action: action, text: text)
        query.append(" LIMIT \(Self.pageSize + 1) OFFSET \(max(0, page - 1) * Self.pageSize)")
        let rows = try await pool.query(query)
        let entries = try rows.prefix(Self.pageSize).map(AuditEntry.init(row:))
        return (entries, rows.count > Self.pageSize)
    }

    /// The most rows one export holds, newest first (a narrower filter reaches older ones).
    public static let exportLimit = 10_000

    /// The rows `search` filters, newest first, up to `exportLimit`, for a download.
    public func export(owner: String?, action: String?, text: String?) async throws -> [AuditEntry] {
        var query = Self.filtered(owner: owner, action: action, text: text)
        query.append(" LIMIT \(Self.exportLimit)")
        return try await pool.query(query).map(AuditEntry.init(row:))
    }

    private static func filtered(owner: String?, action: String?, text: String?) -> PGQuery {
        var query: PGQuery = """
            SELECT id, owner_email, at, action, target, before::text AS before, after::text AS after, client_address,
                   user_agent, undoes,
                   (SELECT undo.id FROM console_audit undo WHERE undo.undoes = console_audit.id) AS undone_by
            FROM console_audit WHERE true
            """
        if let owner, !owner.isEmpty { query.append(" AND lower(owner_email) LIKE \(Self.contains(owner))") }
        if let action, !action.isEmpty { query.append(" AND action = \(action)") }
        if let text, !text.isEmpty { query.append(" AND search_text LIKE \(Self.contains(text))") }
        query.append(" ORDER BY at DESC, id DESC")
        return query
    }

    /// The actions that occur in the log, for the filter's choices.
    public func actions() async throws -> [String] {
        try await pool.query("SELECT DISTINCT action FROM console_audit ORDER BY action")
            .map { try $0.decode("action") }
    }

    /// `%text%` in lower case, with LIKE's wildcards escaped (they match themselves).
    static func contains(_ text: String) -> String {
        "%" + QuoteSearch.escapeLike(text.lowercased()) + "%"
    }
}
