import Foundation
import HTTPServer
import QuoteVault

/// A console request after the pipeline applied its route's policies: the session (for owner routes) and the
/// parsed form.
struct ConsoleRequest: Sendable {
    let http: Request
    /// The signed-in owner; nil only on routes open to anyone.
    let session: OwnerSession?
    let form: ConsoleForm
    let context: ConsoleContext

    /// The owner of an owner route (the pipeline guarantees one).
    var owner: OwnerSession {
        guard let session else { preconditionFailure("\(http.routePattern) is not an owner route") }
        return session
    }

    /// Where the request came from, as the audit log keeps it.
    var client: AuditClient { AuditClient(address: http.clientAddress, userAgent: http.headers["User-Agent"]) }

    /// The owner as the audit log names them, with where the request came from.
    var actor: AuditActor { owner.actor.from(client) }

    /// The hidden field every form of an owner page carries.
    var csrfField: HTML {
        guard let session else { return .empty }
        return "<input type=\"hidden\" name=\"\(CSRFToken.fieldName)\" value=\"\(CSRFToken.of(session))\">"
    }

    func query(_ name: String) -> String? { http.queryValue(name) }

    /// `id` of the path as a UUID; a malformed one is a page that does not exist.
    func pathUUID(_ name: String) throws -> UUID {
        guard let id = UUID(uuidString: http.pathParameter(name)) else { throw Failure.notFound }
        return id
    }
}
