import HTTPServer
import Logging
import QuoteVault

/// Applies each console route's declared policies, in one place: the owner session from the cookie, the form,
/// the CSRF token; then renders the handler's answer, or its failure as the console's error page, and puts the
/// console's security headers on every answer.
enum ConsolePipeline {
    static func route(_ route: ConsoleRoute, context: ConsoleContext, logger: Logger) -> Route {
        Route(route.method, route.pattern, maxBodySize: route.bodyLimit, cost: route.cost, handler: Handler { request in
            var response: Response
            do {
                response = try await answer(request, route: route, context: context)
            } catch {
                let failure = ConsoleFailure(error)
                if failure == .internalError {
                    logger.error("console request failed", metadata: [
                        "route": .string(route.pattern), "error": .string(String(describing: type(of: error))),
                    ])
                }
                response = ConsoleFailurePage.response(failure, for: request)
            }
            ConsoleHeaders.apply(to: &response)
            return response
        })
    }

    private static func answer(_ request: Request, route: ConsoleRoute, context: ConsoleContext) async throws
        -> Response
    {
        // A form another site's page posts (browsers say so in Sec-Fetch-Site): never ours, even the sign-in, which
        // has no session to carry a CSRF token yet.
        if route.method == .post, request.headers["Sec-Fetch-Site"]?.lowercased() == "cross-site" {
            throw ConsoleFailure.forbidden("The console takes forms from its own pages only. Nothing was changed.")
        }
        var session: OwnerSession?
        if route.access == .owner {
            guard let token = SessionCookie.token(in: request), let live = try await context.sessions.resume(token)
            else { throw ConsoleFailure.signInRequired }
            session = live
        }
        let form = try ConsoleForm(request)
        if route.csrf {
            guard let session, CSRFToken.matches(form[CSRFToken.fieldName], session) else {
                throw ConsoleFailure.forbidden("The form is missing its security token or the token is not this "
                    + "session's. Nothing was changed; reload the page and try again.")
            }
        }
        let consoleRequest = ConsoleRequest(http: request, session: session, form: form, context: context)
        return render(try await route.handler(consoleRequest), for: consoleRequest)
    }

    static func render(_ answer: ConsoleAnswer, for request: ConsoleRequest) -> Response {
        switch answer {
        case .page(let title, let body, let status, let refresh):
            return html(ConsoleLayout.page(title: title, body: body, request: request, refreshSeconds: refresh), status)
        case .bare(let title, let body, let status):
            return html(ConsoleLayout.page(title: title, body: body, request: nil), status)
        case .redirect(let location, let cookie):
            var response = Response(status: 303, headers: ["Location": location])
            if let cookie { response.headers.add("Set-Cookie", cookie) }
            return response
        case .file(let contentType, let bytes):
            return Response(status: 200, headers: ["Content-Type": contentType], body: bytes)
        }
    }

    static func html(_ page: HTML, _ status: Int) -> Response {
        Response(status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(page.rendered.utf8))
    }
}
