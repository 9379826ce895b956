import Foundation

/// Who did something, as the audit log keeps it (the email stays when the owner is removed).
public struct AuditActor: Sendable, Equatable {
    /// Nil for the server's operator at the command line.
    public let ownerID: UUID?
    public let email: String

    /// `quote-server owner add|remove`, run by whoever operates the server.
    public static let commandLine = AuditActor(ownerID: nil, email: "quote-server (command line)")
}
