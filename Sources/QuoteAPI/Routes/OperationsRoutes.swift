import HTTPServer
import Logging
import PGClient
import QuoteVault

/// `/health`, `/ready` and `/openapi.json`.
struct OperationsRoutes {
    let context: AppContext

    var routes: [Route] {
        [
            Route(.get, "/health", handler: .immediate { _ in Self.healthy }),
            Route(.get, "/ready", handler: Handler(ready)),
            Route(.get, "/openapi.json", handler: .immediate { _ in Self.openAPI }),
        ]
    }

    private static let healthy = Response.json(bytes: Array(#"{"status":"ok"}"#.utf8))
    private static let openAPI = Response.json(bytes: OpenAPIDocument.bytes)

    /// Ready when PostgreSQL answers and every migration this build knows is applied.
    @Sendable private func ready(_ request: Request) async throws -> Response {
        do {
            if try await context.migrator.isCurrent(using: context.pool) {
                return Response.json(bytes: Array(#"{"status":"ready"}"#.utf8))
            }
            throw HTTPError.serviceUnavailable("Migrations are not current")
        } catch let error as PGError {
            context.logger.warning("not ready", metadata: ["error": .string(error.description)])
            throw HTTPError.serviceUnavailable("The database is unavailable")
        }
    }
}
