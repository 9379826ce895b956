import Foundation

/// Who did something, as the audit log keeps it (the email stays when the owner is removed).
public struct AuditActor: Sendable, Equatable {
    public let ownerID: UUID
    public let email: String

    public init(ownerID: UUID, email: String) {
        self.ownerID = ownerID
        self.email = email
    }
}
