import HTTPServer
import PGClient
import QuoteVault

extension RestRoutes {
    /// Who the audit log names for a write made with the service role key.
    static let serviceRoleWriter = "service role key (/rest/v1)"

    /// The transaction of a `/rest/v1` write. A service role write first names its writer and client for the
    /// transaction, and the tables' triggers audit every row it changes (migration 0068), whichever statement
    /// wrote it; the app's users' writes are not audited.
    func writeTransaction<T: Sendable>(
        _ request: Request, _ caller: SupabaseCaller, _ body: @escaping @Sendable (PGConnection) throws -> T
    ) async throws -> T {
        let client =
            caller == .serviceRole
            ? AuditClient(address: request.clientAddress, userAgent: request.headers["User-Agent"]) : nil
        return try await context.pool.withTransaction { connection in
            if let client {
                try connection.query(
                    """
                    SELECT set_config('quotevault.audit_actor', \(Self.serviceRoleWriter), true),
                           set_config('quotevault.audit_address', \(client.address), true),
                           set_config('quotevault.audit_user_agent', \(client.userAgent), true)
                    """)
            }
            return try body(connection)
        }
    }
}
