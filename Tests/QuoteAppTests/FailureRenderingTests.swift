import Foundation
import HTTPServer
import Logging
import PGClient
@testable import SupabaseAPI
import QuoteVault
import TestSupport
import XCTest

/// Every failure × every surface, through the real pipeline over HTTP: a route per surface (declared with that
/// surface's dialect) throws each failure, and the answer has the failure's status (the same on every surface,
/// except where a Supabase client library pins its own, listed below), `Retry-After` exactly when the failure
/// has one, and the surface's body dialect.
final class FailureRenderingTests: XCTestCase {
    enum Surface: String, CaseIterable { case v1, auth, rest, storage }

    static let dialects: [Surface: any ErrorDialect] = [
        .v1: ProblemJSON(), .auth: GoTrueDialect(), .rest: PostgRESTDialect(), .storage: StorageDialect(),
    ]

    /// One of every case, and the errors of other layers that must classify as one.
    static let failures: [(name: String, error: any Error)] = [
        ("bad_request", Failure.badRequest(code: "invalid_json", detail: "The body is not valid JSON")),
        ("validation", Failure.invalid("name", "is required")),
        ("body_field_missing", HTTPError.validation(field: "password", "is required")),
        ("unsupported_media_type", Failure.unsupportedMediaType("Send image/png")),
        ("payload_too_large", Failure.payloadTooLarge(limit: 10)),
        ("unauthorized", Failure.unauthorized),
        ("invalid_credentials", Failure.invalidCredentials),
        ("refresh_token_invalid", Failure.refreshTokenInvalid),
        ("refresh_token_reused", Failure.refreshTokenReused),
        ("reset_token_invalid", Failure.resetTokenInvalid),
        ("forbidden", Failure.forbidden("not yours")),
        ("quota_exceeded", Failure.quotaExceeded(quota: "collections_per_account", message: "at most 3")),
        ("not_found", Failure.notFound),
        ("conflict", Failure.conflict("taken", retryAfterSeconds: 1)),
        ("email_exists", Failure.emailExists),
        ("idempotency_key_reused", Failure.idempotencyKeyReused),
        ("sync_token_expired", Failure.syncTokenExpired),
        ("rate_limited", Failure.rateLimited(retryAfterSeconds: 3)),
        ("busy", Failure.busy(retryAfterSeconds: 2)),
        ("unreachable", PGError(kind: .connection, message: "server closed the connection")),
        ("pool_exhausted", PGError(kind: .poolExhausted, message: "no connection")),
        ("read_only", PGError(kind: .server, sqlState: .readOnlySQLTransaction, message: "read-only")),
        ("statement_timeout", PGError(kind: .server, sqlState: .queryCanceled, message: "canceled")),
        ("unique_violation", PGError(kind: .server, sqlState: "23505", message: "duplicate key")),
        ("check_violation", PGError(kind: .server, sqlState: "23514", message: "violates check")),
        ("bug_in_sql", PGError(kind: .server, sqlState: "XX000", message: "internal error")),
        ("internal", Failure.internal),
        ("unknown_error", CocoaError(.featureUnsupported)),
    ]

    /// Where a Supabase client pins a status other than the failure's (GoTrue's auth errors; PostgREST's 400 for
    /// a check violation; Storage's client errors on HTTP 400 with the status in `statusCode`).
    static func expectedStatus(_ failure: Failure, on surface: Surface) -> Int {
        switch (surface, failure) {
        case (.auth, .validation), (.auth, .invalidCredentials), (.auth, .refreshTokenInvalid),
            (.auth, .refreshTokenReused):
            return 400
        case (.auth, .emailExists): return 422
        case (.auth, .unauthorized), (.auth, .resetTokenInvalid), (.auth, .forbidden): return 403
        case (.rest, .validation): return 400
        case (.rest, .forbidden): return 401  // the anonymous role, as PostgREST answers 42501
        case (.storage, .forbidden): return 403
        case (.storage, _) where failure.status < 429 && failure.status != 413: return 400
        default: return failure.status
        }
    }

    private var server: HTTPServer!

    override func setUp() async throws {
        var routes: [Route] = []
        for surface in Surface.allCases {
            for (name, error) in Self.failures {
                let policy = RoutePolicy(dialect: Self.dialects[surface]!)
                let path = "/\(surface.rawValue)/\(name)"
                routes.append(Route(.get, path, policy, handler: Handler { _ in throw error }))
            }
        }
        var logger = Logger(label: "FailureRenderingTests")
        logger.logLevel = .critical
        server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0, refusalDelay: .zero),
            router: Router(routes: routes), logger: logger, classify: Failure.init(classifying:))
        try server.start()
    }

    override func tearDown() async throws {
        await server.shutdown()
    }

    func testEveryFailureHasOneStatusOnEverySurfaceInItsDialect() throws {
        let client = HTTPTestClient(port: server.port)
        for (name, error) in Self.failures {
            let failure = Failure(classifying: error)
            for surface in Surface.allCases {
                let response = try client.get("/\(surface.rawValue)/\(name)")
                let context = "\(name) on \(surface): \(response.status) \(response.text)"
                XCTAssertEqual(response.status, Self.expectedStatus(failure, on: surface), context)
                XCTAssertEqual(response.header("Retry-After"), failure.retryAfterSeconds.map(String.init), context)
                let body = try response.jsonObject()
                switch surface {
                case .v1:
                    XCTAssertEqual(response.header("Content-Type"), "application/problem+json", context)
                    XCTAssertEqual(body["code"] as? String, failure.code, context)
                    XCTAssertEqual(body["status"] as? Int, failure.status, context)
                case .auth:
                    XCTAssertNotNil(body["code"] as? String, context)
                    XCTAssertEqual(body["code"] as? String, body["error_code"] as? String, context)
                    XCTAssertNotNil(body["msg"] as? String, context)
                    XCTAssertNotNil(response.header("X-Supabase-Api-Version"), context)
                case .rest:
                    XCTAssertNotNil(body["code"] as? String, context)
                    XCTAssertNotNil(body["message"] as? String, context)
                    XCTAssertTrue(body.keys.contains("details") && body.keys.contains("hint"), context)
                case .storage:
                    let statusCode = response.status == 400 ? failure.status : response.status
                    XCTAssertEqual(body["statusCode"] as? String, String(statusCode), context)
                    XCTAssertNotNil(body["error"] as? String, context)
                    XCTAssertNotNil(body["message"] as? String, context)
                }
            }
        }
    }

    func testDatabaseUnavailabilityOfEveryKindIs503AndOnlyABugIs500() {
        for (name, error) in Self.failures {
            let failure = Failure(classifying: error)
            switch name {
            case "unreachable", "pool_exhausted", "read_only", "statement_timeout":
                XCTAssertEqual(failure.status, 503, name)
                XCTAssertNotNil(failure.retryAfterSeconds, name)
            case "bug_in_sql", "internal", "unknown_error":
                XCTAssertEqual(failure, .internal, name)
            case "busy":
                XCTAssertEqual(failure.status, 503, name)
            default:
                XCTAssertLessThan(failure.status, 500, name)
            }
        }
    }
}
