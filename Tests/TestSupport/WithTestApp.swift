import QuoteAPI

/// Runs `body` with the application started on a new database (see `TestApp.start`), and stops it when `body`
/// returns or throws: a failing test leaves no server or pool behind for the next one.
public func withTestApp<T>(
    databaseURL: String? = nil, configure: (inout AppConfiguration) -> Void = { _ in },
    _ body: (TestApp) async throws -> T
) async throws -> T {
    let app = try await TestApp.start(databaseURL: databaseURL, configure)
    do {
        let result = try await body(app)
        await app.stop()
        return result
    } catch {
        await app.stop()
        throw error
    }
}
