import Failures
import HTTPServer

/// The console's error dialect: every failure of a console route, whether refused from the headers or thrown by
/// its handler, as the console's HTML page (`ConsoleFailurePage`) with the console's security headers.
struct ConsoleDialect: ErrorDialect {
    func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response {
        var response = ConsoleFailurePage.response(failure, for: request)
        ConsoleHeaders.apply(to: &response)
        return response
    }
}
