import Foundation
import TestSupport
import XCTest

/// The stages each route's declaration lists (`Stage`), read off the mounted routes: the surface's first on every
/// route but the probes, then the route's own.
final class RouteStagesTests: XCTestCase {
    private static let surface = ["client_address", "cost_admission"]

    func testEveryRouteButTheProbesPassesTheSurfacesStagesFirst() async throws {
        let app = try await startTestApp()
        let probes: Set = ["/health", "/openapi.json", "/metrics"]
        for route in app.application.server.router.routes {
            let stages = route.policy.stages.map(\.name)
            if probes.contains(route.pattern) {
                XCTAssertEqual(stages, [], "\(route.pattern) is answered from memory, with no stages")
            } else {
                XCTAssertEqual(Array(stages.prefix(2)), Self.surface, "\(route.method) \(route.pattern)")
            }
        }
    }

    func testTheStagesOfASearchARestInsertAndAConsoleFormPost() async throws {
        let app = try await startTestApp()
        func stages(_ method: String, _ pattern: String) throws -> [String] {
            let route = try XCTUnwrap(
                app.application.server.router.routes.first { $0.method.rawValue == method && $0.pattern == pattern })
            return route.policy.stages.map(\.name)
        }
        XCTAssertEqual(try stages("GET", "/v1/quotes/search"), Self.surface + ["search_answer_cache"])
        XCTAssertEqual(try stages("POST", "/v1/collections"), Self.surface + ["idempotency"])
        XCTAssertEqual(try stages("POST", "/rest/v1/{table}"), Self.surface + ["public_schema_only"])
        XCTAssertEqual(try stages("POST", "/console/quotes"), Self.surface + ["console_security_headers", "csrf"])
    }
}
