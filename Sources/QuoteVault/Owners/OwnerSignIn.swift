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

    /// Spends the link and opens a session, ending `replacing` (the session the browser had: a sign-in never leaves
    /// an earlier session alive beside it). Each attempt counts against the throttle (per address, and per owner
    /// once the link names one) unless it succeeds; a wrong code leaves the link unspent. Every refusal is audited
    /// with the client, and so is the attempt that locks an address or an owner.
    /// - Returns: the session's cookie token and the owner.
    /// - Throws: `OwnerSignInError`, or `Failure.rateLimited`.
    public func signIn(
        link token: String, code: String?, client: AuditClient, replacing: String? = nil, now: Date = Date()
    ) async throws -> (session: String, owner: Owner) {
        let hash = OpaqueToken.hash(token)
        let (reservation, linkOwner) = try await pool.withTransaction { [throttle] connection in
            let linkOwner = try connection.query(
                """
                SELECT o.id, o.email FROM console_sign_in_tokens t JOIN console_owners o ON o.id = t.owner_id
                WHERE t.token_hash = \(hash)
                """
            ).first.map { AuditActor(ownerID: try $0.decode("id"), email: try $0.decode("email"), client: client) }
            let reservation = try throttle.reserve(address: client.address, owner: linkOwner?.ownerID, connection)
            if linkOwner == nil {
                try Self.audit(.invalidLink, reservation, .unknownLink(client), connection)
            }
            return (reservation, linkOwner)
        }
        // An unknown link (a guess, the common flood) is refused without a second transaction; it stays counted.
        guard let linkOwner else { throw OwnerSignInError.invalidLink }
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
            else {
                try Self.audit(.invalidLink, reservation, linkOwner, connection)
                return .refused(.invalidLink)
            }
            let owner = try Owner(row: row)
            if let secret = try row.decode("totp_secret", as: [UInt8]?.self) {
                guard let code, !code.isEmpty else {
                    try throttle.giveBack(reservation, connection)
                    return .refused(.codeRequired)
                }
                guard try OwnerSecondFactor.accept(code, secret: secret, ownerID: owner.id, at: now, connection) else {
                    try Self.audit(.wrongCode, reservation, linkOwner, connection)
                    return .refused(.wrongCode)
                }
            }
            try connection.query("UPDATE console_sign_in_tokens SET used_at = now() WHERE token_hash = \(hash)")
            try throttle.giveBack(reservation, connection)
            try OwnerHousekeeping.prune(connection)
            if let replacing { try OwnerSessions.end(token: replacing, connection) }
            let session = try OwnerSessions.open(ownerID: owner.id, connection)
            try AuditLog.record(linkOwner, action: "owner.sign_in", target: owner.email, connection)
            return .signedIn(session: session, owner: owner)
        }
        switch outcome {
        case .signedIn(let session, let owner): return (session, owner)
        case .refused(let reason):
            // The attempt that used up the owner's allowance says so at once, with the lock's real length.
            if reason == .wrongCode, let lock = reservation.exhausted.first(where: { $0.key == "owner" }) {
                throw Failure.rateLimited(retryAfterSeconds: lock.seconds)
            }
            throw reason
        }
    }

    /// A refused sign-in's audit rows: the refusal, and a lock when this attempt used up an allowance.
    private static func audit(
        _ reason: OwnerSignInError, _ reservation: OwnerSignInThrottle.Reservation, _ actor: AuditActor,
        _ connection: PGConnection
    ) throws {
        let why =
            switch reason {
            case .invalidLink: "unknown, used or expired link"
            case .codeRequired: "no code"
            case .wrongCode: "wrong or reused code"
            }
        try AuditLog.record(
            actor, action: "owner.sign_in_refused", target: actor.email, after: ["reason": why], connection)
        for lock in reservation.exhausted {
            try AuditLog.record(
                actor, action: "owner.sign_in_locked", target: lock.key,
                after: ["minutes": String(lock.seconds / 60)], connection)
        }
    }
}
