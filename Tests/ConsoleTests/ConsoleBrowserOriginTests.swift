import Foundation
import TestSupport
import XCTest

/// The console's own forms as Chromium posts them: under the pages' `Referrer-Policy: no-referrer` the browser
/// sends `Origin: null` with `Sec-Fetch-Site: same-origin`, which must pass; `null` without it stays refused.
final class ConsoleBrowserOriginTests: XCTestCase {
    func testAnOwnPageFormWithANullOriginAndSameOriginFetchSiteIsAccepted() async throws {
        let app = try await startTestApp()
        let link = try await app.addOwner()
        let browser = ["Origin": "null", "Sec-Fetch-Site": "same-origin"]
        let signedIn = try app.consolePost("/console/sign-in", fields: ["token": link], headers: browser)
        XCTAssertEqual(signedIn.status, 303, signedIn.text)
        let cookie = String(try XCTUnwrap(signedIn.header("Set-Cookie")).split(separator: ";")[0])
        let token = try XCTUnwrap(TestApp.csrfToken(in: try app.consoleGet("/console", cookie: cookie).text))
        let signedOut = try app.consolePost(
            "/console/sign-out", cookie: cookie, fields: ["csrf_token": token], headers: browser)
        XCTAssertEqual(signedOut.status, 303, signedOut.text)

        let other = try await app.addOwner()
        for headers in [["Origin": "null"], ["Origin": "null", "Sec-Fetch-Site": "same-site"]] {
            XCTAssertEqual(
                try app.consolePost("/console/sign-in", fields: ["token": other], headers: headers).status, 403,
                "\(headers)")
        }
    }
}
