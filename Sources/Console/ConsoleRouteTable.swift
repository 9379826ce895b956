import HTTPServer

/// Every console route on one screen, each with its policies: `page` (an owner's GET), `action` (an owner's form
/// post, CSRF-checked), `open` (anyone). Handlers live in the page files.
enum ConsoleRouteTable {
    static let routes: [ConsoleRoute] = [
        .open(.get, ConsoleStylesheet.path) { _ in
            .file(
                contentType: "text/css; charset=utf-8",
                bytes: ConsoleStylesheet.bytes)
        },
        .open(.get, "/console/sign-in", SignInPages.show),
        .open(.post, "/console/sign-in", cost: .auth, SignInPages.signIn),
        .action("/console/sign-out", SignInPages.signOut),

        .page("/console", OverviewPage.show),

        // A search costs what /v1's does.
        .page(
            "/console/quotes", cost: .upgraded(.cheapRead) { !($0.queryValue("q") ?? "").isEmpty },
            QuoteListPage.show),
        .page("/console/quotes/new", QuoteFormPages.new),
        .page("/console/quotes/export.csv", cost: .expensive, QuoteExport.csv),
        .page("/console/quotes/export.json", cost: .expensive, QuoteExport.json),
        .action("/console/quotes/bulk-delete", QuoteBulkDeletePages.delete),
        .action("/console/quotes", QuoteFormPages.create),
        .page("/console/quotes/{id}/edit", QuoteFormPages.edit),
        .action("/console/quotes/{id}", QuoteFormPages.update),
        .page("/console/quotes/{id}/delete", QuoteDeletePages.confirm),
        .action("/console/quotes/{id}/delete", QuoteDeletePages.delete),

        .page("/console/quotes/import", ImportPages.show),
        .action("/console/quotes/import", bodyLimit: ImportPages.uploadLimit, cost: .expensive, ImportPages.upload),
        .page("/console/quotes/import/{id}", ImportPages.draft),
        .action("/console/quotes/import/{id}/confirm", ImportPages.confirm),
        .action("/console/quotes/import/{id}/resume", ImportPages.resume),

        .page("/console/audit", AuditPage.show),
        .page("/console/audit.csv", cost: .expensive, AuditPage.export),
        .page("/console/audit/{id}/undo", AuditUndoPages.confirm),
        .action("/console/audit/{id}/undo", AuditUndoPages.undo),

        .page("/console/qotd", QuoteOfTheDayPages.calendar),
        .page("/console/qotd/{date}", QuoteOfTheDayPages.day),
        .action("/console/qotd/{date}/pin", QuoteOfTheDayPages.pin),
        .action("/console/qotd/{date}/unpin", QuoteOfTheDayPages.unpin),

        .page("/console/accounts", AccountPages.list),
        .page("/console/accounts/{id}", AccountPages.show),
        .action("/console/accounts/{id}/revoke", AccountPages.revoke),
        .action("/console/accounts/{id}/ban", AccountPages.ban),
        .action("/console/accounts/{id}/reset", AccountPages.sendReset),
        .action("/console/accounts/{id}/enable", AccountPages.enable),
        .page("/console/accounts/{id}/delete", AccountPages.confirmDelete),
        .action("/console/accounts/{id}/delete", AccountPages.delete),

        .page("/console/security", SecurityPages.show),
        .action("/console/security/totp", SecurityPages.enrol),
        .action("/console/security/sessions/end", OwnerSessionList.endAll),
        .action("/console/security/sessions/{id}/end", OwnerSessionList.endOne),

        // Anything else under /console: the console's not-found page, for owners (others are sent to sign in).
        .unknown(.get),
        .unknown(.post),
    ]
}
