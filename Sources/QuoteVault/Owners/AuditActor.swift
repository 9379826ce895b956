import Foundation

/// Who did something, as the audit log keeps it (the email stays when the owner is removed).
public struct AuditActor: Sendable, Equatable {
    /// Nil for the server's operator at the command line, and for a sign-in link nobody owns.
    public let ownerID: UUID?
    public let email: String
    /// Nil at the command line.
    public var client: AuditClient?

    public init(ownerID: UUID?, email: String, client: AuditClient? = nil) {
        self.ownerID = ownerID
        self.email = email
        self.client = client
    }

    /// `quote-server owner add|remove`, run by whoever operates the server.
    public static let commandLine = AuditActor(ownerID: nil, email: "quote-server (command line)")

    /// Whoever tried a sign-in link that names no owner (a guess, or a link of a removed owner).
    static func unknownLink(_ client: AuditClient) -> AuditActor {
        AuditActor(ownerID: nil, email: "(unknown sign-in link)", client: client)
    }

    /// The same actor, seen coming from `client`.
    public func from(_ client: AuditClient) -> AuditActor {
        AuditActor(ownerID: ownerID, email: email, client: client)
    }
}
