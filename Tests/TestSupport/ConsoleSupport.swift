import Foundation
import QuoteVault
import XCTest

/// What the console tests share: owners, signing in, forms with the CSRF token.
extension TestApp {
    /// The `Content-Security-Policy` of every console answer.
    public static let consoleContentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'"

    /// Adds an owner directly (what `quote-server owner add` does) and answers the sign-in token.
    public func addOwner(_ email: String = "owner-\(UUID().uuidString.prefix(8).lowercased())@example.com") async throws
        -> String
    {
        try await OwnerDirectory(pool: pool).add(email: email)
    }

    /// Signs in with a link's token; answers the `Cookie` header value of the new session.
    public func signInToConsole(token: String, code: String? = nil, file: StaticString = #filePath, line: UInt = #line)
        throws -> String
    {
        var fields = ["token": token]
        if let code { fields["code"] = code }
        let response = try consolePost("/console/sign-in", fields: fields)
        XCTAssertEqual(response.status, 303, response.text, file: file, line: line)
        let setCookie = try XCTUnwrap(response.header("Set-Cookie"), file: file, line: line)
        return String(setCookie.split(separator: ";")[0])
    }

    /// A signed-in owner's cookie, for tests about something else.
    public func consoleOwner(_ email: String? = nil) async throws -> String {
        let token = if let email { try await addOwner(email) } else { try await addOwner() }
        return try signInToConsole(token: token)
    }

    public func consoleGet(_ path: String, cookie: String? = nil, headers: [String: String] = [:]) throws
        -> HTTPTestResponse
    {
        var headers = headers
        if let cookie { headers["Cookie"] = cookie }
        return try client.get(path, headers: headers)
    }

    /// A form post (urlencoded), as a browser sends it.
    public func consolePost(
        _ path: String, cookie: String? = nil, fields: [String: String], headers: [String: String] = [:]
    )
        throws -> HTTPTestResponse
    {
        var headers = headers
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        if let cookie { headers["Cookie"] = cookie }
        let body = fields.map { "\(Self.formEncode($0.key))=\(Self.formEncode($0.value))" }.joined(separator: "&")
        return try client.send("POST", path, headers: headers, body: Array(body.utf8))
    }

    /// Posts `fields` with the CSRF token the page `formPage` carries, and its form's `version` when it has one
    /// (as the browser submits that page's form).
    public func consoleSubmit(
        _ path: String, cookie: String, fields: [String: String], from formPage: String = "/console"
    )
        throws -> HTTPTestResponse
    {
        let page = try consoleGet(formPage, cookie: cookie).text
        var fields = fields
        if fields["version"] == nil { fields["version"] = Self.hiddenValue("version", in: page) }
        fields["csrf_token"] = try XCTUnwrap(Self.csrfToken(in: page))
        return try consolePost(path, cookie: cookie, fields: fields)
    }

    /// Sends the headers of an import upload announcing `length` bytes, and not one byte of the body: the answer
    /// can only come from the headers.
    public func consoleUploadHeaders(length: Int, cookie: String) throws -> HTTPTestResponse {
        let connection = try HTTPTestConnection(port: application.port)
        defer { connection.close() }
        XCTAssertTrue(
            connection.write(
                Array(
                    """
                    POST /console/quotes/import HTTP/1.1\r
                    Host: 127.0.0.1\r
                    Content-Type: multipart/form-data; boundary=x\r
                    Content-Length: \(length)\r
                    Cookie: \(cookie)\r
                    \r

                    """.utf8)))
        return try connection.readResponse(method: "POST")
    }

    public static func csrfToken(in page: String) -> String? {
        hiddenValue("csrf_token", in: page)
    }

    /// The value of the hidden input `name` in a page.
    public static func hiddenValue(_ name: String, in page: String) -> String? {
        guard let range = page.range(of: #"name="\#(name)" value="([^"]*)""#, options: .regularExpression) else {
            return nil
        }
        let match = page[range]
        return String(match.split(separator: "\"")[3])
    }

    public static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text)
    }
}
