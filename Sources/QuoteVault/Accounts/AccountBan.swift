import Foundation
import PGClient

/// The one rule of a disabled (banned) account, like GoTrue's `banned_until`: while `users.banned_until` is in the
/// future, no token is minted for it (sign-in, refresh, a reset link) and no access token of it is accepted.
enum AccountBan {
    /// True for the `users` row aliased `u` when it may act now (a constant: no input in it).
    static let notBanned = "(u.banned_until IS NULL OR u.banned_until <= now())"

    /// Refuses `userBanned` inside the caller's transaction when the account is disabled.
    static func refuseIfBanned(_ userID: UUID, _ connection: PGConnection) throws {
        let banned = try connection.query(
            "SELECT 1 AS banned FROM users u WHERE u.id = \(userID) AND NOT \(unsafeSQL: notBanned)")
        if !banned.isEmpty { throw QuoteVaultError.userBanned }
    }
}
