import Foundation
import PGClient

/// A person who runs the service through the console (not an app user).
public struct Owner: Sendable, Equatable {
    public let id: UUID
    public let email: String
    public let createdAt: Date
    /// Whether sign-in asks for a TOTP code.
    public let hasSecondFactor: Bool

    static let columns = "o.id, o.email, o.created_at, o.totp_secret IS NOT NULL AS has_second_factor"

    init(row: PGRow) throws {
        id = try row.decode("id")
        email = try row.decode("email")
        createdAt = try row.decode("created_at")
        hasSecondFactor = try row.decode("has_second_factor")
    }
}
