import QuoteAPI
import XCTest

extension XCTestCase {
    /// Starts the application on a new database (see `TestApp.start`) for the rest of this test: it is stopped
    /// when the test ends, also when it throws or fails. For an app stopped before the test ends, use
    /// `withTestApp`.
    public func startTestApp(
        databaseURL: String? = nil, _ configure: (inout AppConfiguration) -> Void = { _ in }
    ) async throws -> TestApp {
        let app = try await TestApp.start(databaseURL: databaseURL, configure)
        addTeardownBlock { await app.stop() }
        return app
    }
}
