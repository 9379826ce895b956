import AuthJWT
import Foundation
import HTTPServer
import TestSupport
import XCTest

/// Behind a load balancer every request comes from the proxy's address: with `TRUSTED_PROXIES`, per-address limits
/// apply to the clients its `X-Forwarded-For` names; without it, the header is anyone's to write and is ignored.
/// (The reset-confirmation throttle, 20 failures per address, is the limit used: it costs no hashing.)
final class TrustedProxyTests: XCTestCase {
    private func confirm(_ app: TestApp, forwardedFor: String?) throws -> Int {
        var headers = ["Content-Type": "application/json"]
        if let forwardedFor { headers["X-Forwarded-For"] = forwardedFor }
        let body = #"{"token":"\#(try OpaqueToken.generate())","password":"new password"}"#
        return try app.client.send("POST", "/v1/auth/password-reset/confirm", headers: headers, body: Array(body.utf8))
            .status
    }

    func testBehindATrustedProxyEachForwardedClientHasItsOwnAllowance() async throws {
        let app = try await startTestApp { $0.trustedProxies = ["127.0.0.1"] }
        for _ in 0..<20 { XCTAssertEqual(try confirm(app, forwardedFor: "127.0.0.7"), 400) }
        XCTAssertEqual(try confirm(app, forwardedFor: "127.0.0.7"), 429, "the client past its limit")
        XCTAssertEqual(
            try confirm(app, forwardedFor: "127.0.0.8, 127.0.0.7"), 429,
            "what the client wrote before the proxy's entry does not change who it is")
        XCTAssertEqual(
            try confirm(app, forwardedFor: "127.0.0.7, 127.0.0.8"), 400, "another client has its own allowance")
        XCTAssertEqual(try confirm(app, forwardedFor: nil), 400, "the proxy's own requests are its own")
    }

    func testAnUntrustedPeersForwardedForIsIgnored() async throws {
        let app = try await startTestApp()
        for index in 0..<20 { XCTAssertEqual(try confirm(app, forwardedFor: "127.0.0.\(10 + index)"), 400) }
        XCTAssertEqual(
            try confirm(app, forwardedFor: "127.0.0.99"), 429, "a made-up header does not buy a new allowance")
    }

    func testTheClientIsTheRightMostAddressNoProxyWrote() {
        let proxies = TrustedProxies(["127.0.0.1", " 10.0.0.2 ", ""])
        XCTAssertEqual(proxies.addresses, ["127.0.0.1", "10.0.0.2"])
        XCTAssertEqual(proxies.client(peer: "127.0.0.9", forwardedFor: "192.0.2.1"), "127.0.0.9", "untrusted peer")
        XCTAssertEqual(proxies.client(peer: "127.0.0.1", forwardedFor: nil), "127.0.0.1")
        XCTAssertEqual(proxies.client(peer: "127.0.0.1", forwardedFor: "192.0.2.1"), "192.0.2.1")
        XCTAssertEqual(proxies.client(peer: "127.0.0.1", forwardedFor: "198.51.100.4, 192.0.2.1"), "192.0.2.1")
        XCTAssertEqual(
            proxies.client(peer: "127.0.0.1", forwardedFor: "192.0.2.1, 10.0.0.2"), "192.0.2.1", "a chain of proxies")
        XCTAssertEqual(proxies.client(peer: "127.0.0.1", forwardedFor: "2001:db8::1"), "2001:db8::1")
        XCTAssertEqual(
            proxies.client(peer: "127.0.0.1", forwardedFor: "not-an-address"), "127.0.0.1", "garbage is no key")
        XCTAssertEqual(
            proxies.client(peer: "127.0.0.1", forwardedFor: "10.0.0.2"), "127.0.0.1", "only proxies forwarded")
    }
}
