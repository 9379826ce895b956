import Foundation
import PGClient

/// Mail waiting to be delivered. Rows are written in the transaction that causes them, so a mail exists
/// exactly when its cause was committed; delivery happens afterwards (see `MailDelivery`).
public enum MailOutbox {
    static func enqueue(to recipient: String, subject: String, body: String, _ connection: PGConnection) throws {
        try connection.query(
            "INSERT INTO mail_outbox (recipient, subject, body) VALUES (\(recipient), \(subject), \(body))")
    }

    /// Mails not yet delivered (for metrics).
    public static func backlog(_ pool: PGPool) async throws -> Int {
        try await pool.query("SELECT count(*)::int8 AS n FROM mail_outbox WHERE sent_at IS NULL")
            .first?.decode("n", as: Int.self) ?? 0
    }
}
