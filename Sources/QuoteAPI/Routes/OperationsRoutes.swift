import AuthJWT
import HTTPServer
import Logging
import PGClient
import QuoteVault

/// `/health`, `/ready` and `/openapi.json`.
struct OperationsRoutes {
    let context: AppContext
    /// The document of the `/v1` routes (`OpenAPIDocument`).
    let openAPI: Response

    private static let healthy = Response.json(bytes: Array(#"{"status":"ok"}"#.utf8))

    @Sendable func health(_ request: Request) -> Response { Self.healthy }

    @Sendable func document(_ request: Request) -> Response { openAPI }

    @Sendable func scrape(_ request: Request) -> Response {
        mayScrape(request) ? metrics : HTTPError.notFound().response
    }

    /// Prometheus text; every gauge is read from memory, so this never waits for the database.
    private var metrics: Response {
        let body = context.metrics.render(
            pool: context.pool.stats, publicPool: context.publicPool.stats,
            hashingQueueDepth: context.hashing.queueDepth,
            mailBacklog: context.mail.backlog,
            replicaUse: context.readPool.replicaUse)
        return Response(status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: body)
    }

    /// `/metrics` is for whoever holds `METRICS_TOKEN`, or (without one) for clients on the loopback interface;
    /// anyone else is told there is no such route, as for any unknown path.
    private func mayScrape(_ request: Request) -> Bool {
        if let token = context.configuration.metricsToken {
            return request.bearerToken.map { ConstantTime.equals(Array($0.utf8), Array(token.utf8)) } ?? false
        }
        return request.clientAddress.hasPrefix("127.") || request.clientAddress == "::1"
    }

    /// Ready when PostgreSQL answers and every migration this build knows is applied. With read replicas, an
    /// unreachable primary alone does not make the instance unready: public reads go on from a replica, and a load
    /// balancer that took every instance out (they share the primary) would refuse those too; writes answer 503
    /// meanwhile, and the body says `"primary":"unavailable"`. The check runs on the public reads' connections:
    /// writes that all wait (for a synchronous standby) do not take the instance out while its reads still answer.
    /// With read replicas their check runs alongside the primary's, so a primary slow to fail (a failover under way)
    /// does not also delay the answer past the load balancer's check timeout.
    @Sendable func ready(_ request: Request) async throws -> Response {
        guard !context.drain.isDraining else { throw HTTPError.serviceUnavailable("The server is stopping") }
        async let readNodesAnswer = readNodesAreCurrent()
        do {
            if try await context.migrator.isCurrent(using: context.publicPool) {
                return Response.json(bytes: Array(#"{"status":"ready"}"#.utf8))
            }
            throw HTTPError.serviceUnavailable("Migrations are not current")
        } catch let error as PGError {
            context.logger.warning("not ready", metadata: ["error": .string(error.description)])
            if await readNodesAnswer {
                return Response.json(bytes: Array(#"{"status":"ready","primary":"unavailable"}"#.utf8))
            }
            throw HTTPError.serviceUnavailable("The database is unavailable")
        }
    }

    /// Whether a read URL answers with every migration applied, even one the replica monitor took out a moment ago
    /// (reads go there when the primary fails too; see `ReplicaRouter`). Never the primary: its public-reads pool
    /// may be queued with reads waiting for it while it is handed over. False without read replicas.
    private func readNodesAreCurrent() async -> Bool {
        for pool in context.readPool.replicaPools where (try? await context.migrator.isCurrent(using: pool)) == true {
            return true
        }
        return false
    }
}
