import Foundation
import QuoteVault

/// App accounts: find by email, an account's figures and live sessions, revoke every session, delete the account
/// (after a confirmation page). Never shows a password hash or a token.
enum AccountPages {
    static func list(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let text = request.query("q") ?? ""
        let page = Pager.page(request)
        let (accounts, hasMore) = try await request.context.accounts.find(text, page: page)
        let rows = accounts.map { account -> HTML in
            """
            <tr><td><a href="/console/accounts/\(account.id.uuidString.lowercased())">\(account.email)</a></td>
            <td data-label="Signed up">\(ConsoleFormat.date(account.signedUpAt))</td>
            <td data-label="Last sign-in">\(account.lastSignInAt.map(ConsoleFormat.date) ?? "never")</td>
            <td data-label="Favorites">\(account.favorites)</td><td data-label="Collections">\(account.collections)</td>
            <td data-label="Active sessions">\(account.activeSessions)</td></tr>
            """
        }
        let table: HTML =
            accounts.isEmpty
            ? "<p class=\"muted\">No account matches.</p>"
            : """
            <table class="cards"><thead><tr><th>Email</th><th>Signed up</th><th>Last sign-in</th><th>Favorites</th>
            <th>Collections</th><th>Active sessions</th></tr></thead><tbody>\(rows)</tbody></table>
            """
        return .page(
            title: "Accounts",
            body: """
                <form class="inline" method="get" action="/console/accounts"><label>Email contains
                <input name="q" value="\(text)" maxlength="254" autocomplete="off"></label>
                <button type="submit">Find</button></form>
                \(table)\(Pager.links("/console/accounts", filters: [("q", text)], page: page, hasMore: hasMore))
                """)
    }

    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let account = try await request.context.accounts.account(id)
        let sessions = try await request.context.accounts.sessions(of: id)
        let rows = sessions.map { session -> HTML in
            """
            <tr><td data-label="Started">\(ConsoleFormat.date(session.createdAt))</td>
            <td data-label="Last refreshed">\(ConsoleFormat.date(session.lastUsedAt))</td>
            <td data-label="Expires">\(ConsoleFormat.date(session.expiresAt))</td></tr>
            """
        }
        let sessionTable: HTML =
            sessions.isEmpty
            ? "<p class=\"muted\">No active session.</p>"
            : """
            <table class="cards"><thead><tr><th>Started</th><th>Last refreshed</th><th>Expires</th></tr></thead>
            <tbody>\(rows)</tbody></table>
            """
        let path = "/console/accounts/\(id.uuidString.lowercased())"
        let notice: HTML =
            // A number only: the query string is anyone's to write, and a notice is trusted text.
            request.query("revoked").flatMap { Int($0) }.map { count -> HTML in
                """
                <p class="notice" role="status">Revoked \(count) session(s): the next request with their tokens is
                refused.</p>
                """
            } ?? .empty
        return .page(
            title: account.email,
            body: """
                <p><a href="/console/accounts">← Accounts</a></p>\(notice)
                <dl class="facts">
                <dt>Signed up</dt><dd>\(ConsoleFormat.date(account.signedUpAt))</dd>
                <dt>Last sign-in</dt><dd>\(account.lastSignInAt.map(ConsoleFormat.date) ?? "never")</dd>
                <dt>Favorites</dt><dd>\(account.favorites)</dd>
                <dt>Collections</dt><dd>\(account.collections)</dd>
                <dt>Active sessions</dt><dd>\(account.activeSessions)</dd>
                </dl>
                <h2>Active sessions</h2>\(sessionTable)
                <form class="inline" method="post" action="\(path)/revoke">\(request.csrfField)
                <button type="submit">Revoke all sessions</button></form>
                <p><a class="button danger" href="\(path)/delete">Delete this account…</a></p>
                """)
    }

    static func revoke(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let revoked = try await request.context.accounts.revokeSessions(of: id, by: request.actor)
        return .redirect("/console/accounts/\(id.uuidString.lowercased())?revoked=\(revoked)")
    }

    static func confirmDelete(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let account = try await request.context.accounts.account(id)
        let path = "/console/accounts/\(id.uuidString.lowercased())"
        return .page(
            title: "Delete \(account.email)?",
            body: """
                <p class="notice">This deletes the account, its \(account.favorites) favorite(s), its
                \(account.collections) collection(s) and its sessions, at once and for good.</p>
                <form class="inline" method="post" action="\(path)/delete">\(request.csrfField)
                <button class="danger" type="submit">Delete the account</button>
                <a class="button secondary" href="\(path)">Cancel</a></form>
                """)
    }

    static func delete(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        try await request.context.accounts.delete(id, by: request.actor)
        return .redirect("/console/accounts")
    }
}
