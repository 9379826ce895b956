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
            <tr><td><a href="/console/accounts/\(account.id.uuidString.lowercased())">\(account.email)</a>\(
            account.displayName.map { name -> HTML in "<br><span class=\"muted\">\(name)</span>" } ?? .empty)\(
            account.banned ? " <strong class=\"error\">disabled</strong>" : HTML.empty)</td>
            <td data-label="Signed up">\(ConsoleFormat.dateHTML(account.signedUpAt))</td>
            <td data-label="Last sign-in">\(account.lastSignInAt.map(ConsoleFormat.dateHTML) ?? "never")</td>
            <td data-label="Favorites">\(account.favorites)</td><td data-label="Collections">\(account.collections)</td>
            <td data-label="Active sessions">\(account.activeSessions)</td></tr>
            """
        }
        let table: HTML =
            accounts.isEmpty
            ? "<p class=\"muted\">No account matches.</p>"
            : """
            <table class="cards"><thead><tr><th>Email and name</th><th>Signed up</th><th>Last sign-in</th><th>Favorites</th>
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
        let favorites = try await request.context.accounts.favorites(of: id)
        let collections = try await request.context.accounts.collections(of: id)
        let rows = sessions.map { session -> HTML in
            """
            <tr><td data-label="Started">\(ConsoleFormat.dateHTML(session.createdAt))</td>
            <td data-label="Last refreshed">\(ConsoleFormat.dateHTML(session.lastUsedAt))</td>
            <td data-label="Expires">\(ConsoleFormat.dateHTML(session.expiresAt))</td></tr>
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
            } ?? AccountNotice.of(request.query("done"))
        let standing: HTML =
            account.banned
            ? """
            <form class="inline" method="post" action="\(path)/enable">\(request.csrfField)
            <button type="submit">Re-enable the account</button></form>
            """
            : """
            <form class="inline" method="post" action="\(path)/ban">\(request.csrfField)
            <button class="danger" type="submit">Disable (ban) the account</button></form>
            """
        return .page(
            title: account.email,
            body: """
                <p><a href="/console/accounts">← Accounts</a></p>\(notice)
                <dl class="facts">
                <dt>Display name</dt><dd>\(account.displayName ?? "none")</dd>
                <dt>Status</dt><dd>\(account.banned ? "disabled: no sign-in, tokens refused" : "active")</dd>
                <dt>Signed up</dt><dd>\(ConsoleFormat.dateHTML(account.signedUpAt))</dd>
                <dt>Last sign-in</dt><dd>\(account.lastSignInAt.map(ConsoleFormat.dateHTML) ?? "never")</dd>
                <dt>Favorites</dt><dd>\(account.favorites)</dd>
                <dt>Collections</dt><dd>\(account.collections)</dd>
                <dt>Active sessions</dt><dd>\(account.activeSessions)</dd>
                </dl>
                <h2>Favorites</h2>\(favoriteList(favorites, total: account.favorites))
                <h2>Collections</h2>\(collectionList(collections, total: account.collections))
                <h2>Active sessions</h2>\(sessionTable)
                <form class="inline" method="post" action="\(path)/revoke">\(request.csrfField)
                <button type="submit">Revoke all sessions</button></form>
                <form class="inline" method="post" action="\(path)/reset">\(request.csrfField)
                <button type="submit">Send a password-reset mail</button></form>
                \(standing)
                <p><a class="button danger" href="\(path)/delete">Delete this account…</a></p>
                """)
    }

    static func revoke(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let revoked = try await request.context.accounts.revokeSessions(of: id, by: request.actor)
        return .redirect("/console/accounts/\(id.uuidString.lowercased())?revoked=\(revoked)")
    }

    /// The app's own reset mail, counted against the recipient's cap like a reset the user asks for.
    static func sendReset(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        let account = try await request.context.accounts.account(id)
        let notice: AccountNotice
        do {
            try await request.context.passwordResets.requestPasswordReset(email: account.email, by: request.actor)
            notice = .resetSent
        } catch Failure.rateLimited {
            notice = .resetCapped
        }
        return .redirect("/console/accounts/\(id.uuidString.lowercased())?done=\(notice.rawValue)")
    }

    private static func favoriteList(_ favorites: [AccountDirectory.Favorite], total: Int) -> HTML {
        guard !favorites.isEmpty else { return "<p class=\"muted\">No favorite.</p>" }
        let rows = favorites.map { favorite -> HTML in
            """
            <tr><td><a href="/console/quotes/\(favorite.quoteID.uuidString.lowercased())/edit">\(favorite.text)</a></td>
            <td data-label="Author">\(favorite.author)</td>
            <td data-label="Added">\(ConsoleFormat.dateHTML(favorite.addedAt))</td></tr>
            """
        }
        return """
            \(shown(favorites.count, of: total))<table class="cards"><thead><tr><th>Quote</th><th>Author</th>
            <th>Added</th></tr></thead><tbody>\(rows)</tbody></table>
            """
    }

    private static func collectionList(_ collections: [AccountDirectory.Collection], total: Int) -> HTML {
        guard !collections.isEmpty else { return "<p class=\"muted\">No collection.</p>" }
        let rows = collections.map { collection -> HTML in
            """
            <tr><td>\(collection.name)</td><td data-label="Quotes">\(collection.quotes)</td>
            <td data-label="Created">\(ConsoleFormat.dateHTML(collection.createdAt))</td></tr>
            """
        }
        return """
            \(shown(collections.count, of: total))<table class="cards"><thead><tr><th>Name</th><th>Quotes</th>
            <th>Created</th></tr></thead><tbody>\(rows)</tbody></table>
            """
    }

    /// "The newest N of M" when the list is cut short.
    private static func shown(_ count: Int, of total: Int) -> HTML {
        total > count ? "<p class=\"muted\">The newest \(count) of \(total).</p>" : .empty
    }

    static func ban(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        try await request.context.accounts.ban(id, by: request.actor)
        return .redirect("/console/accounts/\(id.uuidString.lowercased())?done=\(AccountNotice.banned.rawValue)")
    }

    static func enable(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let id = try request.pathUUID("id")
        try await request.context.accounts.enable(id, by: request.actor)
        return .redirect("/console/accounts/\(id.uuidString.lowercased())?done=\(AccountNotice.enabled.rawValue)")
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
