import Foundation
import Logging
import PGClient
import Synchronization

/// Delivers the outbox: over SMTP when configured, else into the server log (the contract's channel for
/// development). Failed deliveries are retried with exponential backoff; a mail is marked sent right after
/// the SMTP server accepted it, in the same transaction that locked it, so no mail is lost and none is
/// sent twice in normal operation (a crash between acceptance and the commit would resend it once:
/// delivery is at least once).
public final class MailDelivery: Sendable {
    private let pool: PGPool
    private let smtp: SMTPClient?
    private let from: String
    private let logger: Logger
    private let task = BackgroundTask()
    private let lastBacklog = Mutex<Int?>(nil)

    public init(pool: PGPool, smtpURL: String?, from: String, logger: Logger) {
        self.pool = pool
        self.smtp = smtpURL.map { SMTPClient(url: $0, from: from) }
        self.from = from
        self.logger = logger
    }

    /// Starts the background loop (polls every `interval`).
    public func start(interval: Duration = .milliseconds(500)) {
        task.start { [self] in
            while !Task.isCancelled {
                do {
                    while try await deliverBatch() > 0 {}
                    try await countBacklog()
                } catch {
                    logger.warning("mail delivery pass failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    public func stop() { task.cancel() }

    /// Whether the loop has ended after `stop()` (a pass in flight finishes first).
    public var hasEnded: Bool { task.hasEnded }

    /// Mails not yet delivered, as counted after the delivery loop's last pass (nil before the first): read by
    /// `/metrics` without touching the database, so a scrape never waits for it.
    public var backlog: Int? { lastBacklog.withLock { $0 } }

    /// Counts the undelivered mails (the partial index on unsent rows keeps this cheap).
    public func countBacklog() async throws {
        let count = try await pool.query("SELECT count(*)::int8 AS pending FROM mail_outbox WHERE sent_at IS NULL")
        let pending = try count[count.startIndex].decode("pending", as: Int.self)
        lastBacklog.withLock { $0 = pending }
    }

    /// Delivers up to 10 due mails; returns how many were attempted.
    @discardableResult
    public func deliverBatch() async throws -> Int {
        let smtp = self.smtp, from = self.from, logger = self.logger
        return try await pool.withTransaction { connection in
            // SKIP LOCKED: several instances deliver side by side without sending one mail twice.
            let due = try connection.query(
                """
                SELECT id, recipient, subject, body, attempts FROM mail_outbox
                WHERE sent_at IS NULL AND next_attempt_at <= now()
                ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED
                """)
            for row in due {
                let id = try row.decode("id", as: Int.self)
                let recipient = try row.decode("recipient", as: String.self)
                let subject = try row.decode("subject", as: String.self)
                let body = try row.decode("body", as: String.self)
                do {
                    if let smtp {
                        try smtp.send(
                            to: recipient,
                            message: Self.message(from: from, to: recipient, subject: subject, body: body))
                    } else {
                        // Development channel: the mail, reset link included, goes to the log by design.
                        logger.info(
                            "mail",
                            metadata: ["to": .string(recipient), "subject": .string(subject), "body": .string(body)])
                    }
                    try connection.query(
                        "UPDATE mail_outbox SET sent_at = now(), attempts = attempts + 1 WHERE id = \(id)")
                } catch {
                    let attempts = try row.decode("attempts", as: Int.self) + 1
                    let backoff = min(300, 1 << min(attempts, 8))
                    try connection.query(
                        """
                        UPDATE mail_outbox SET attempts = \(attempts), last_error = \(String(describing: error)),
                            next_attempt_at = now() + \(backoff) * interval '1 second'
                        WHERE id = \(id)
                        """)
                    logger.warning(
                        "mail not delivered, will retry",
                        metadata: [
                            "mail_id": .stringConvertible(id), "attempts": .stringConvertible(attempts),
                            "error": "\(error)",
                        ])
                }
            }
            return due.count
        }
    }

    /// An RFC 5322 message with CRLF line ends.
    static func message(from: String, to recipient: String, subject: String, body: String) -> [UInt8] {
        let date = DateFormatter()
        date.locale = Locale(identifier: "en_US_POSIX")
        date.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let text = """
            Date: \(date.string(from: Date()))
            From: \(from)
            To: <\(recipient)>
            Subject: \(subject)
            Message-ID: <\(UUID().canonicalText)@quotevault>
            MIME-Version: 1.0
            Content-Type: text/plain; charset=utf-8

            \(body)
            """
        // SMTP wants CRLF, and a line that is a lone "." would end the DATA section early.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasPrefix(".") ? "." + $0 : String($0)
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }
}
