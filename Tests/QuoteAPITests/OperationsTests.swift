import Foundation
import TestSupport
import XCTest

/// `/health`, `/ready`, `/openapi.json` and the conventions every route shares.
final class OperationsTests: XCTestCase {
    func testHealthAnswersOK() async throws {
        let app = try await startTestApp()
        let response = try app.client.get("/health")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try response.jsonObject()["status"] as? String, "ok")
        XCTAssertNotNil(response.header("X-Request-Id"))
    }

    func testReadyWhenMigrated() async throws {
        let app = try await startTestApp()
        XCTAssertEqual(try app.client.get("/ready").status, 200)
        // A migration this build knows but the database lacks makes the server not ready.
        try await app.withConnection { try $0.query("DELETE FROM schema_migrations WHERE version = '0001'") }
        let response = try app.client.get("/ready")
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(try response.jsonObject()["code"] as? String, "service_unavailable")
    }

    func testReadyFollowsTheDatabaseDownAndBackWithoutRestart() async throws {
        let cluster = try TestDatabase.makeDedicatedCluster(label: "ready")
        _ = try cluster.start()
        let url = try cluster.start()
        let app = try await TestApp.start(databaseURL: url)
        XCTAssertEqual(try app.client.get("/ready").status, 200)

        try cluster.stop()
        let down = try app.client.get("/ready")
        XCTAssertEqual(down.status, 503)
        XCTAssertEqual(down.header("Content-Type"), "application/problem+json")
        XCTAssertNotNil(down.header("Retry-After"))
        XCTAssertEqual(try app.client.get("/health").status, 200, "health does not touch the database")

        _ = try cluster.start()
        var status = 0
        for _ in 0..<100 where status != 200 {  // at most ~20 s
            status = try app.client.get("/ready").status
            if status != 200 { try await Task.sleep(for: .milliseconds(200)) }
        }
        XCTAssertEqual(status, 200, "the pool reconnects by itself")
        await app.stop()
        try cluster.stop()
    }

    func testOpenAPIDocumentIsOpenAPI31AndListsOperations() async throws {
        let app = try await startTestApp()
        let response = try app.client.get("/openapi.json")
        XCTAssertEqual(response.status, 200)
        let document = try response.jsonObject()
        XCTAssertEqual(document["openapi"] as? String, "3.1.0")
        let paths = try XCTUnwrap(document["paths"] as? [String: Any])
        for path in ["/health", "/ready", "/openapi.json"] {
            XCTAssertNotNil(paths[path], "\(path) is documented")
        }
    }

    /// Every route of the contract; the Supabase-compatible surface speaks Supabase's own protocol (GoTrue,
    /// PostgREST, Storage, Realtime), whose documents are Supabase's, and is left out on purpose; so are the console's HTML
    /// pages (`/console`), which are no API.
    func testEveryRouteIsDocumentedInOpenAPI() async throws {
        let app = try await startTestApp()
        let document = try app.client.get("/openapi.json").jsonObject()
        let paths = try XCTUnwrap(document["paths"] as? [String: [String: Any]])
        let supabase = ["/auth/v1/", "/rest/v1/", "/storage/v1/", "/realtime/v1/", "/console"]
        for route in app.application.server.router.routes
        where !supabase.contains(where: { route.pattern.hasPrefix($0) }) {
            let operations = paths[route.pattern]
            XCTAssertNotNil(
                operations?[route.method.rawValue.lowercased()], "\(route.method) \(route.pattern) is documented")
        }
    }

    /// `Idempotency-Key` and the bearer token are documented on exactly the operations whose route's policy
    /// honours the key or asks for a user's token.
    func testRoutePoliciesAreDocumented() async throws {
        let app = try await startTestApp()
        let document = try app.client.get("/openapi.json").jsonObject()
        let paths = try XCTUnwrap(document["paths"] as? [String: [String: Any]])
        var documented = 0
        for route in app.application.server.router.routes {
            guard let operation = paths[route.pattern]?[route.method.rawValue.lowercased()] as? [String: Any] else {
                continue
            }
            let parameters = operation["parameters"] as? [[String: Any]] ?? []
            let takesKey = parameters.contains { $0["$ref"] as? String == "#/components/parameters/IdempotencyKey" }
            XCTAssertEqual(takesKey, route.policy.idempotent, "\(route.method) \(route.pattern)")
            XCTAssertEqual(
                operation["security"] != nil, route.policy.authentication.name == "user_token",
                "\(route.method) \(route.pattern)")
            documented += takesKey ? 1 : 0
        }
        XCTAssertGreaterThan(documented, 10, "the /v1 writes take Idempotency-Key")
    }
}
