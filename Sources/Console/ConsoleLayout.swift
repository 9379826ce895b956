/// The page around every console page: head, the navigation, sign-out, the content.
enum ConsoleLayout {
    /// The sections of the navigation, in order.
    static let sections: [(title: String, path: String)] = [
        ("Overview", "/console"), ("Quotes", "/console/quotes"), ("Import", "/console/quotes/import"),
        ("Quote of the day", "/console/qotd"), ("Accounts", "/console/accounts"),
        ("Audit log", "/console/audit"), ("Security", "/console/security"),
    ]

    static func page(title: String, body: HTML, request: ConsoleRequest?, refreshSeconds: Int? = nil) -> HTML {
        let refresh: HTML = refreshSeconds.map { "<meta http-equiv=\"refresh\" content=\"\($0)\">" } ?? .empty
        var header = HTML.empty
        if let request, let session = request.session {
            let links = sections.map { section -> HTML in
                let current = section.path == request.http.path ? " aria-current=\"page\"" : ""
                return "<li><a href=\"\(section.path)\"\(HTML(rendered: current))>\(section.title)</a></li>"
            }
            header = """
                <header class="bar"><a class="brand" href="/console">QuoteVault console</a>
                <nav><ul>\(links)</ul></nav>
                <form class="sign-out" method="post" action="/console/sign-out">\(request.csrfField)\
                <span>\(session.email)</span> <button type="submit">Sign out</button></form></header>
                """
        } else {
            header = "<header class=\"bar\"><span class=\"brand\">QuoteVault console</span></header>"
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">\(refresh)
            <title>\(title) · QuoteVault console</title>
            <link rel="icon" href="data:,"><link rel="stylesheet" href="/console/static/console.css"></head>
            <body>\(header)<main><h1>\(title)</h1>
            \(body)</main></body></html>
            """
    }
}
