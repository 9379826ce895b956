import Foundation
import QuoteVault

/// The signed-in owner's console sessions on the Security page: when each started and was last used, with a form
/// to end each other one, or all of them at once.
enum OwnerSessionList {
    static func html(_ request: ConsoleRequest) async throws -> HTML {
        let owner = request.owner
        let sessions = try await request.context.sessions.live(of: owner.ownerID)
        let rows = sessions.map { session -> HTML in
            let end: HTML =
                session.id == owner.id
                ? "<span class=\"muted\">this session</span>"
                : """
                <form class="inline" method="post" action="/console/security/sessions/\(
                session.id.uuidString.lowercased())/end">\(request.csrfField)<button type="submit">End</button></form>
                """
            return """
                <tr><td data-label="Started">\(ConsoleFormat.dateHTML(session.createdAt))</td>
                <td data-label="Last used">\(ConsoleFormat.dateHTML(session.lastSeenAt))</td><td>\(end)</td></tr>
                """
        }
        let endAll: HTML =
            sessions.count > 1
            ? """
            <form class="inline" method="post" action="/console/security/sessions/end">\(request.csrfField)
            <button class="danger" type="submit">End all my other sessions</button></form>
            """
            : .empty
        let notice: HTML =
            request.query("done") == "sessions_ended"
            ? "<p class=\"notice\" role=\"status\">Your other session(s) ended: they must sign in again.</p>" : .empty
        return """
            <h2>Your console sessions</h2>\(notice)
            <table class="cards"><thead><tr><th>Started</th><th>Last used</th><th></th></tr></thead>
            <tbody>\(rows)</tbody></table>\(endAll)
            """
    }

    /// Ends one of the owner's other sessions (never the current one, never another owner's).
    static func endOne(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        try await request.context.sessions.endOthers(of: request.owner, id: id)
        return .redirect("/console/security?done=sessions_ended")
    }

    static func endAll(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        try await request.context.sessions.endOthers(of: request.owner)
        return .redirect("/console/security?done=sessions_ended")
    }
}
