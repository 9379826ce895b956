import Foundation
import PGClient

/// The first answer to each `(user, Idempotency-Key)` for 24 hours, shared by every server instance.
///
/// A request first claims its key (one statement: the row is inserted with no answer yet); it then runs and its
/// answer is stored. A second request with the key finds the row: with another fingerprint it is refused, with
/// an answer it gets the answer, while the first still runs it waits (`inProgress`). A key left unanswered by a
/// crashed instance is taken over after `lease` by a request with the same fingerprint.
public struct IdempotencyStore: Sendable {
    public static let maximumKeyLength = 255
    public static let lease: Duration = .seconds(60)
    /// Live keys one user may hold (24 hours of them): storage stays bounded whatever a client sends. Beyond it a
    /// new key is `429` until old ones expire; keys already held keep working.
    public static let maximumKeysPerUser = 10_000
    /// Bytes of stored answers one user's live keys may hold (a sync batch's answer can be a few hundred KB):
    /// beyond it a new key is `429` until old ones expire, like past `maximumKeysPerUser`.
    public static let maximumAnswerBytesPerUser = 16 << 20

    /// A stored first answer.
    public struct StoredResponse: Sendable {
        public let status: Int
        public let contentType: String?
        public let body: [UInt8]

        public init(status: Int, contentType: String?, body: [UInt8]) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }
    }

    public enum Claim: Sendable {
        /// The caller runs the request, then calls `complete` or `release`.
        case claimed
        case replay(StoredResponse)
        /// The key was used for another request (method, path or body).
        case mismatch
        /// The first request with this key has not answered yet.
        case inProgress
    }

    private let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// 1…255 visible ASCII characters (0x21…0x7E).
    public static func isValidKey(_ key: String) -> Bool {
        (1...maximumKeyLength).contains(key.utf8.count) && key.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    public func claim(userID: UUID, key: String, fingerprint: [UInt8]) async throws -> Claim {
        let retention = Int(SyncMaintenance.idempotencyRetention.components.seconds)
        let lease = Int(Self.lease.components.seconds)
        // A row pruned between the two statements is claimed on the next round; two rounds always settle it.
        for _ in 0..<3 {
            let claimed = try await pool.query(
                """
                INSERT INTO idempotency_keys AS k (user_id, key, fingerprint)
                SELECT \(userID), \(key), \(fingerprint)
                WHERE \(Self.withinQuota(userID, retention: retention))
                ON CONFLICT (user_id, key) DO UPDATE
                    SET fingerprint = excluded.fingerprint, started_at = now(), created_at = now(),
                        status = NULL, content_type = NULL, body = NULL
                    WHERE k.created_at < now() - make_interval(secs => \(retention))
                       OR (k.status IS NULL AND k.started_at < now() - make_interval(secs => \(lease))
                           AND k.fingerprint = excluded.fingerprint)
                RETURNING 1 AS claimed
                """)
            if !claimed.isEmpty { return .claimed }
            guard
                let row = try await pool.query(
                    """
                    SELECT fingerprint, status, content_type, body FROM idempotency_keys k
                    WHERE \(Self.held(userID, key))
                    """
                ).first
            else {
                // Not claimed and not there: the user holds too many keys (or the row was pruned just now).
                if try await !pool.query("SELECT \(Self.withinQuota(userID, retention: retention)) AS within")[0]
                    .decode("within", as: Bool.self)
                {
                    throw QuoteVaultError.rateLimited(retryAfterSeconds: 60)
                }
                continue
            }
            guard try row.decode("fingerprint", as: [UInt8].self) == fingerprint else { return .mismatch }
            guard let status = try row.decode("status", as: Int?.self) else { return .inProgress }
            return .replay(
                StoredResponse(
                    status: status, contentType: try row.decode("content_type"),
                    body: try row.decode("body", as: [UInt8]?.self) ?? []))
        }
        return .inProgress
    }

    /// Whether the user's live keys leave room for one more: fewer than `maximumKeysPerUser`, holding fewer than
    /// `maximumAnswerBytesPerUser` bytes of answers (`octet_length` reads a stored value's size, not the value).
    private static func withinQuota(_ userID: UUID, retention: Int) -> PGQuery {
        """
        (SELECT count(*) < \(maximumKeysPerUser) AND coalesce(sum(octet_length(body)), 0) < \(maximumAnswerBytesPerUser)
         FROM (SELECT body FROM idempotency_keys k WHERE \(RowOwner.idempotencyKeys.owned("k", by: userID))
               AND created_at >= now() - make_interval(secs => \(retention)) LIMIT \(maximumKeysPerUser)) AS live)
        """
    }

    /// The row of `key` among the user's (aliased `k`).
    private static func held(_ userID: UUID, _ key: String) -> PGQuery {
        "\(RowOwner.idempotencyKeys.owned("k", by: userID)) AND k.key = \(key)"
    }

    /// Stores the first answer of a claimed key.
    public func complete(userID: UUID, key: String, _ response: StoredResponse) async throws {
        try await pool.query(
            """
            UPDATE idempotency_keys k
            SET status = \(response.status), content_type = \(response.contentType), body = \(response.body)
            WHERE \(Self.held(userID, key)) AND status IS NULL
            """)
    }

    /// Forgets a claimed key whose request failed in a way worth retrying (a 5xx): the retry runs again.
    public func release(userID: UUID, key: String) async throws {
        try await pool.query(
            "DELETE FROM idempotency_keys k WHERE \(Self.held(userID, key)) AND status IS NULL")
    }
}
