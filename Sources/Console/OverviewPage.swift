/// The console's first page. (Charts of sign-ups, activity, traffic and the database come with the overview's
/// own work; this is where they go.)
enum OverviewPage {
    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        .page(title: "Overview", body: """
            <p>Signed in as <strong>\(request.owner.email)</strong>.</p>
            <p><a href="/console/quotes">Quotes</a> · <a href="/console/audit">Audit log</a></p>
            """)
    }
}
