import Foundation
import TestSupport
import XCTest

/// The console's routes on the server's request pipeline: a refusal the pipeline decides from the headers is
/// the console's own failure page, with the console's security headers.
final class ConsolePipelineTests: XCTestCase {
    func testAnUploadOverTheImportLimitIsTheConsolesPageBeforeItsBodyIsRead() async throws {
        let app = try await TestApp.start()
        defer { Task { await app.stop() } }
        let cookie = try await app.consoleOwner()
        // Headers announcing 9 MB (the import takes 8 MiB), and not one byte of the body.
        let refused = try app.consoleUploadHeaders(length: 9_000_000, cookie: cookie)
        XCTAssertEqual(refused.status, 413)
        XCTAssertEqual(refused.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertTrue(refused.text.contains("Too large"), refused.text)
        XCTAssertEqual(refused.header("Content-Security-Policy"), TestApp.consoleContentSecurityPolicy)
        XCTAssertEqual(refused.header("Cache-Control"), "no-store")
    }
}
