import Foundation
import PGClient

/// Mail waiting to be delivered. Rows are written in the transaction that causes them, so a mail exists
/// exactly when its cause was committed; delivery happens afterwards (see `MailDelivery`).
public enum MailOutbox {
    static func enqueue(to recipient: String, subject: String, body: String, _ connection: PGConnection) throws {
        try connection.query(
            "INSERT INTO mail_outbox (recipient, subject, body) VALUES (\(recipient), \(subject), \(body))")
    }
}
