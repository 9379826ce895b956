import HTTPServer
import XCTest

/// Route lookup without sockets.
final class RouterTests: XCTestCase {
    private let router = Router(routes: [
        Route(.get, "/v1/collections", handler: .immediate { _ in .noContent }),
        Route(.post, "/v1/collections", handler: .immediate { _ in .noContent }),
        Route(.get, "/v1/collections/{id}/quotes", handler: .immediate { _ in .noContent }),
        Route(.put, "/v1/collections/{id}/quotes/{quote_id}", handler: .immediate { _ in .noContent }),
        Route(.get, "/v1/quotes/search", handler: .immediate { _ in .noContent }),
        Route(.get, "/v1/quotes/{id}", handler: .immediate { _ in .noContent }),
        Route(.get, "/files/{bucket}/{path...}", handler: .immediate { _ in .noContent }),
        Route(.get, "/files/public/{bucket}/{path...}", handler: .immediate { _ in .noContent }),
    ])

    func testRestParameterTakesTheRemainingSegments() {
        guard case .found(let route, let parameters) = router.lookup(method: .get, path: "/files/avatars/u1/a/b.png")
        else {
            return XCTFail("no match")
        }
        XCTAssertEqual(route.pattern, "/files/{bucket}/{path...}")
        XCTAssertEqual(parameters, ["bucket": "avatars", "path": "u1/a/b.png"])
        guard
            case .found(let publicRoute, let publicParameters) = router.lookup(
                method: .get, path: "/files/public/avatars/u1/x.png")
        else {
            return XCTFail("no match")
        }
        XCTAssertEqual(publicRoute.pattern, "/files/public/{bucket}/{path...}")
        XCTAssertEqual(publicParameters["path"], "u1/x.png")
        // The rest needs at least one segment, and never climbs.
        guard case .notFound = router.lookup(method: .get, path: "/files/avatars") else {
            return XCTFail("matched without a path")
        }
        guard case .notFound = router.lookup(method: .get, path: "/files/avatars/u1/../other/x.png") else {
            return XCTFail("matched ..")
        }
        guard case .notFound = router.lookup(method: .get, path: "/files/avatars/./x.png") else {
            return XCTFail("matched .")
        }
    }

    func testParametersAreCaptured() {
        guard case .found(let route, let parameters) = router.lookup(method: .put, path: "/v1/collections/c1/quotes/q2")
        else {
            return XCTFail("no match")
        }
        XCTAssertEqual(route.pattern, "/v1/collections/{id}/quotes/{quote_id}")
        XCTAssertEqual(parameters, ["id": "c1", "quote_id": "q2"])
    }

    func testLiteralBeatsParameter() {
        guard case .found(let route, _) = router.lookup(method: .get, path: "/v1/quotes/search") else {
            return XCTFail()
        }
        XCTAssertEqual(route.pattern, "/v1/quotes/search")
        guard case .found(let other, let parameters) = router.lookup(method: .get, path: "/v1/quotes/123") else {
            return XCTFail()
        }
        XCTAssertEqual(other.pattern, "/v1/quotes/{id}")
        XCTAssertEqual(parameters["id"], "123")
    }

    func testALiteralPathIsFoundAlikeHoweverItIsSpelled() {
        for path in ["/v1/quotes/search", "/v1/quotes/search/", "//v1//quotes/search"] {
            guard case .found(let route, let parameters) = router.lookup(method: .get, path: path) else {
                return XCTFail(path)
            }
            XCTAssertEqual(route.pattern, "/v1/quotes/search", path)
            XCTAssertEqual(parameters, [:], path)
            // A method the literal route lacks is 405 for it, not a match of the `{id}` route beside it.
            guard case .methodNotAllowed(let allowed) = router.lookup(method: .post, path: path) else {
                return XCTFail(path)
            }
            XCTAssertEqual(allowed, [.get, .head], path)
        }
    }

    func testMethodNotAllowedListsMethods() {
        guard case .methodNotAllowed(let allowed) = router.lookup(method: .delete, path: "/v1/collections") else {
            return XCTFail()
        }
        XCTAssertEqual(allowed, [.get, .head, .post])
    }

    func testNotFound() {
        guard case .notFound = router.lookup(method: .get, path: "/v1/collections/a/b/c/d") else { return XCTFail() }
        guard case .notFound = router.lookup(method: .get, path: "/v2/collections") else { return XCTFail() }
    }

    func testHeadFallsBackToGet() {
        guard case .found(let route, _) = router.lookup(method: .head, path: "/v1/collections") else {
            return XCTFail()
        }
        XCTAssertEqual(route.method, .get)
    }
}
