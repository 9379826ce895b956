import Failures
import Foundation
import HTTPServer
import Synchronization
import TestSupport
import XCTest

/// A route's stages (`Stage`), over a real socket: run in the order declared, on the event-thread path of an
/// immediate handler too, and answered in the route's dialect when they refuse.
final class StageTests: XCTestCase {
    /// The names of the stages and handlers that ran, in order.
    private final class Trace: Sendable {
        private let entries = Mutex<[String]>([])
        func note(_ entry: String) { entries.withLock { $0.append(entry) } }
        func take() -> [String] {
            entries.withLock { entries in
                defer { entries = [] }; return entries
            }
        }
    }

    /// A stage that notes its name on the way in; with `immediate`, it can run on the event thread too.
    private static func noting(_ name: String, _ trace: Trace, immediate: Bool = true) -> Stage {
        let onEventThread: Stage.Immediate = { request, _, next in
            trace.note(name)
            return try next(request)
        }
        return Stage(name, immediate: immediate ? onEventThread : nil) { request, _, next in
            trace.note(name)
            return try await next(request)
        }
    }

    /// A dialect no other surface uses, to tell whose rendering answered.
    private struct TeapotDialect: ErrorDialect {
        func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response {
            Response(status: 418, body: Array("teapot: \(failure.status)".utf8))
        }
    }

    private func serve(_ routes: [Route]) throws -> HTTPServer {
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0), router: Router(routes: routes),
            logger: LogCapture(level: .error).logger())
        try server.start()
        return server
    }

    private static func answer(_ text: String) -> Response { Response(status: 200, body: Array(text.utf8)) }

    func testStagesRunInTheOrderDeclaredGroupFirst() async throws {
        let trace = Trace()
        let policy = RoutePolicy.open.staged(Self.noting("first", trace), Self.noting("second", trace))
        let route = Route(
            .post, "/staged", policy,
            handler: Handler { _ in
                trace.note("handler")
                return Self.answer("done")
            }
        ).grouped(under: [Self.noting("group", trace)])
        XCTAssertEqual(route.policy.stages.map(\.name), ["group", "first", "second"])
        let server = try serve([route])
        let response = try HTTPTestClient(port: server.port).send("POST", "/staged", json: [:])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(trace.take(), ["group", "first", "second", "handler"])
        await server.shutdown()
    }

    func testAnImmediateRouteRunsItsStagesOnTheEventThread() async throws {
        let trace = Trace()
        let handler = Handler(immediate: { _ in Self.answer("immediate") }, { _ in Self.answer("deferred") })
        let route = Route(.get, "/memory", RoutePolicy.open.staged(Self.noting("binding", trace)), handler: handler)
        let server = try serve([route])
        let response = try HTTPTestClient(port: server.port).get("/memory")
        XCTAssertEqual(response.text, "immediate", "every stage has an immediate form")
        XCTAssertEqual(trace.take(), ["binding"])
        await server.shutdown()
    }

    func testAStageWithoutAnImmediateFormSendsTheRequestDownTheAsyncPath() async throws {
        let trace = Trace()
        let handler = Handler(immediate: { _ in Self.answer("immediate") }, { _ in Self.answer("deferred") })
        let policy = RoutePolicy.open.staged(
            Self.noting("binding", trace), Self.noting("admission", trace, immediate: false))
        let server = try serve([Route(.get, "/memory", policy, handler: handler)])
        let response = try HTTPTestClient(port: server.port).get("/memory")
        XCTAssertEqual(response.text, "deferred")
        XCTAssertEqual(trace.take(), ["binding", "admission"], "each stage ran once, on the async path")
        await server.shutdown()
    }

    func testAStageRefusalIsAnsweredInTheRoutesDialect() async throws {
        let refusing = Stage("refusing") { _, _, _ in throw Failure.forbidden("not here") }
        let policy = RoutePolicy(dialect: TeapotDialect()).staged(refusing)
        let server = try serve([Route(.get, "/refused", policy, handler: Handler { _ in Self.answer("ran") })])
        let response = try HTTPTestClient(port: server.port).get("/refused")
        XCTAssertEqual(response.status, 418)
        XCTAssertEqual(response.text, "teapot: 403")
        await server.shutdown()
    }
}
