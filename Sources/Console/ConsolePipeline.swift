import HTTPServer
import QuoteVault

/// What the console adds around each handler once the server's pipeline has admitted the request (the route's
/// authentication, body limit, cost, the surface's stages): its own stages, listed on each route's policy
/// (`ConsoleRoute`): `securityHeaders` on every answer, then `csrf` on actions; then the handler given the form,
/// its answer rendered. Failures go to the route's dialect (`ConsoleDialect`), which puts the same headers on them.
enum ConsolePipeline {
    /// The console's security headers (`ConsoleHeaders`) on every answer of its handler.
    static let securityHeaders = Stage("console_security_headers") { request, _, next in
        var response = try await next(request)
        ConsoleHeaders.apply(to: &response)
        return response
    }

    /// An owner's form must carry its session's CSRF token; the form parsed here is the one the handler gets.
    static let csrf = Stage("csrf") { request, _, next in
        let form = try ConsoleForm(request)
        guard let session = request.caller as? OwnerSession, CSRFToken.matches(form[CSRFToken.fieldName], session)
        else {
            throw Failure.forbidden(
                "The form is missing its security token or the token is not this "
                    + "session's. Nothing was changed; reload the page and try again.")
        }
        return try await $checkedForm.withValue(form) { try await next(request) }
    }

    /// The form `csrf` parsed, so that an upload is parsed once.
    @TaskLocal private static var checkedForm: ConsoleForm?

    static func handler(_ handler: @escaping ConsoleRoute.Handler, context: ConsoleContext) -> Handler {
        Handler { request in
            let form = try checkedForm ?? ConsoleForm(request)
            let consoleRequest = ConsoleRequest(
                http: request, session: request.caller as? OwnerSession, form: form, context: context)
            return render(try await handler(consoleRequest), for: consoleRequest)
        }
    }

    static func render(_ answer: ConsoleAnswer, for request: ConsoleRequest) -> Response {
        switch answer {
        case .page(let title, let body, let status, let refresh):
            return html(ConsoleLayout.page(title: title, body: body, request: request, refreshSeconds: refresh), status)
        case .bare(let title, let body, let status, let refusal):
            var response = html(ConsoleLayout.page(title: title, body: body, request: nil), status)
            response.isRefusalPastABound = refusal
            return response
        case .redirect(let location, let cookie):
            var response = Response(status: 303, headers: ["Location": location])
            if let cookie { response.headers.add("Set-Cookie", cookie) }
            return response
        case .file(let contentType, let bytes, let download):
            var response = Response(status: 200, headers: ["Content-Type": contentType], body: bytes)
            if let download { response.headers.set("Content-Disposition", "attachment; filename=\"\(download)\"") }
            return response
        case .download(let contentType, let filename, let write):
            let slot: ExportSlots.Slot
            switch request.context.exports.take(owner: request.owner.ownerID) {
            case .success(let taken): slot = taken
            case .failure(let refusal): return tooManyExports(refusal, request)
            }
            let download = DownloadStream(stallLimit: request.context.exportLimits.stall)
            var response = Response(status: 200, headers: ["Content-Type": contentType])
            response.headers.set("Content-Disposition", "attachment; filename=\"\(filename)\"")
            response.stream = download.stream
            Task {
                defer { slot.giveBack() }
                do {
                    try await write(download)
                    download.finish()
                } catch {
                    download.abort()
                }
            }
            return response
        }
    }

    /// A download past an export cap (`ConsoleExportLimits`): `429` with `Retry-After`, saying which cap.
    private static func tooManyExports(_ refusal: ExportSlots.Refusal, _ request: ConsoleRequest) -> Response {
        let reason =
            switch refusal {
            case .owner(let limit): "You have \(limit) exports running, the most one owner may run at once."
            case .all(let limit): "\(limit) exports are running, the most the server runs at once."
            }
        let seconds = ConsoleExportLimits.retryAfterSeconds
        var response = html(
            ConsoleLayout.page(
                title: "Too many exports",
                body: """
                    <p class="error">\(reason) Try again when one has finished (in \(seconds) seconds or so); nothing \
                    was exported.</p><p><a href="/console">Back to the console</a></p>
                    """, request: request), 429)
        response.headers.set("Retry-After", String(seconds))
        return response
    }

    static func html(_ page: HTML, _ status: Int) -> Response {
        Response(status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(page.rendered.utf8))
    }
}
