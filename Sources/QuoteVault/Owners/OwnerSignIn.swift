import AuthJWT
import Foundation
import PGClient

/// Signing in with a one-time link (and, once enrolled, a TOTP code): spends the link and opens a session.
public struct OwnerSignIn: Sendable {
    private let pool: PGPool
    private let throttle: OwnerSignInThrottle

    public init(pool: PGPool, throttle: OwnerSignInThrottle) {
        self.pool = pool
        self.throttle = throttle
    }

    /// The owner a link signs in, when it is still good (not used, not expired); nothing is spent.
    public func owner(ofLink token: String) async throws -> Owner? {
        guard OpaqueToken.isWellFormed(token) else { return nil }
        return try await pool.query(
            """
            SELECT \(unsafeSQL: Owner.columns) FROM console_sign_in_tokens t JOIN console_owners o ON o.id = t.owner_id
            WHERE t.token_hash = \(OpaqueToken.hash(token)) AND t.used_at IS NULL AND t.expires_at > now()
            """
        ).first.map(Owner.init(row:))
    }

    private enum Outcome: Sendable {
        case signedIn(session: String, owner: Owner)
        case refused(OwnerSignInError)
    }

    /// Spends the link and opens a session. Each attempt counts against the throttle (per address, and per owner
    /// once the link names one) unless it succeeds; a wrong code leaves the link unspent.
    /// - Returns: the session's cookie token and the owner.
    /// - Throws: `OwnerSignInError`, or `Failure.rateLimited`.
    public func signIn(link token: String, code: String?, address: String, now: Date = Date()) async throws
        -> (session: String, owner: Owner)
    {
        let hash = OpaqueToken.hash(token)
        let (attempts, linkExists) = try await pool.withTransaction { [throttle] connection in
            let owner = try connection.query("SELECT owner_id FROM console_sign_in_tokens WHERE token_hash = \(hash)")
                .first.map { try $0.decode("owner_id", as: UUID.self) }
            let attempts = try throttle.reserve(address: address, owner: owner, connection)
            return (attempts, owner != nil)
        }
        // An unknown link (a guess, the common flood) is refused without a second transaction; it stays counted.
        guard linkExists else { throw OwnerSignInError.invalidLink }
        let outcome = try await pool.withTransaction { [throttle] connection -> Outcome in
            guard OpaqueToken.isWellFormed(token),
                let row = try connection.query(
                    """
                    SELECT \(unsafeSQL: Owner.columns), o.totp_secret
                    FROM console_sign_in_tokens t JOIN console_owners o ON o.id = t.owner_id
                    WHERE t.token_hash = \(hash) AND t.used_at IS NULL AND t.expires_at > now()
                    FOR UPDATE OF t
                    """
                ).first
            else { return .refused(.invalidLink) }
            let owner = try Owner(row: row)
            if let secret = try row.decode("totp_secret", as: [UInt8]?.self) {
                guard let code, !code.isEmpty else {
                    try throttle.giveBack(attempts, connection)
                    return .refused(.codeRequired)
                }
                guard try OwnerSecondFactor.accept(code, secret: secret, ownerID: owner.id, at: now, connection) else {
                    return .refused(.wrongCode)
                }
            }
            try connection.query("UPDATE console_sign_in_tokens SET used_at = now() WHERE token_hash = \(hash)")
            try throttle.giveBack(attempts, connection)
            try OwnerHousekeeping.prune(connection)
            let session = try OwnerSessions.open(ownerID: owner.id, connection)
            try AuditLog.record(
                AuditActor(ownerID: owner.id, email: owner.email), action: "owner.sign_in",
                target: owner.email, connection)
            return .signedIn(session: session, owner: owner)
        }
        switch outcome {
        case .signedIn(let session, let owner): return (session, owner)
        case .refused(let reason): throw reason
        }
    }
}
