import Foundation

/// A signed-in owner, as resumed from the console's session cookie.
public struct OwnerSession: Sendable, Equatable {
    public let id: UUID
    public let ownerID: UUID
    public let email: String
    public let hasSecondFactor: Bool
    /// The cookie's secret; the console derives the session's CSRF token from it.
    public let token: String

    /// The owner as the audit log names them.
    public var actor: AuditActor { AuditActor(ownerID: ownerID, email: email) }
}
