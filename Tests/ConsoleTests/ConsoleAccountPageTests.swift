import Foundation
import TestSupport
import XCTest

/// An account's page: its display name, favorites and collections; a password-reset mail sent from it, within the
/// recipient's cap.
final class ConsoleAccountPageTests: XCTestCase {
    private func signUp(_ app: TestApp, _ email: String, displayName: String? = nil) throws -> (String, String) {
        var body = ["email": email, "password": "correct horse"]
        body["display_name"] = displayName
        let session = try app.client.send("POST", "/v1/auth/signup", json: body)
        XCTAssertEqual(session.status, 201, session.text)
        let object = try session.jsonObject()
        let id = try XCTUnwrap((object["user"] as? [String: Any])?["id"] as? String)
        return (id, try XCTUnwrap(object["access_token"] as? String))
    }

    func testThePageShowsTheDisplayNameFavoritesAndCollections() async throws {
        let app = try await startTestApp()
        let (id, access) = try signUp(app, "reader@example.com", displayName: "Ann <i>the reader</i>")
        let bearer = ["Authorization": "Bearer \(access)"]
        let quotes = try await app.insertQuotes(["A liked <b>quote</b>", "Another"])
        XCTAssertEqual(try app.client.send("PUT", "/v1/favorites/\(quotes[0])", headers: bearer).status / 100, 2)
        XCTAssertEqual(
            try app.client.send("POST", "/v1/collections", json: ["name": "Morning <reads>"], headers: bearer).status,
            201)
        let cookie = try await app.consoleOwner()
        let page = try app.consoleGet("/console/accounts/\(id)", cookie: cookie).text
        XCTAssertTrue(page.contains("<dt>Display name</dt><dd>Ann &lt;i&gt;the reader&lt;/i&gt;</dd>"), page)
        XCTAssertTrue(page.contains("A liked &lt;b&gt;quote&lt;/b&gt;"), "the favorite, escaped")
        XCTAssertTrue(page.contains("href=\"/console/quotes/\(quotes[0].uuidString.lowercased())/edit\""))
        XCTAssertFalse(page.contains(">Another<"), "only the account's favorites")
        XCTAssertTrue(page.contains("<td>Morning &lt;reads&gt;</td><td data-label=\"Quotes\">0</td>"), page)
        let list = try app.consoleGet("/console/accounts?q=reader", cookie: cookie).text
        XCTAssertTrue(list.contains("<span class=\"muted\">Ann &lt;i&gt;the reader&lt;/i&gt;</span>"), list)
    }

    func testAResetMailIsSentFromTheConsoleWithinTheRecipientsCap() async throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let app = try await startTestApp { $0.smtpURL = sink.url }
        let (id, _) = try signUp(app, "forgot@example.com")
        let cookie = try await app.consoleOwner()
        let page = "/console/accounts/\(id)"
        XCTAssertEqual(try app.consolePost("\(page)/reset", cookie: cookie, fields: [:]).status, 403, "CSRF-checked")

        let sent = try app.consoleSubmit("\(page)/reset", cookie: cookie, fields: [:], from: page)
        XCTAssertEqual(sent.status, 303, sent.text)
        XCTAssertEqual(sent.header("Location"), "\(page)?done=reset_sent")
        XCTAssertTrue(try app.consoleGet("\(page)?done=reset_sent", cookie: cookie).text.contains("reset mail is on"))
        let mail = try await sink.waitForMessages(1)[0]
        XCTAssertTrue(mail.contains("forgot@example.com"))
        let token = try XCTUnwrap(SMTPSink.token(in: mail), mail)
        let confirmed = try app.client.send(
            "POST", "/v1/auth/password-reset/confirm", json: ["token": token, "password": "a brand new one"])
        XCTAssertEqual(confirmed.status, 200, "the app's own reset flow: \(confirmed.text)")
        let audited = try await app.withConnection { connection in
            try connection.query("SELECT count(*)::int8 AS n FROM console_audit WHERE action = 'account.reset_mail'")[0]
                .decode("n", as: Int.self)
        }
        XCTAssertEqual(audited, 1)

        for _ in 0..<2 {
            XCTAssertEqual(
                try app.consoleSubmit("\(page)/reset", cookie: cookie, fields: [:], from: page).header("Location"),
                "\(page)?done=reset_sent")
        }
        let capped = try app.consoleSubmit("\(page)/reset", cookie: cookie, fields: [:], from: page)
        XCTAssertEqual(capped.header("Location"), "\(page)?done=reset_capped", "the recipient's cap holds")
        let refused = try app.consoleGet("\(page)?done=reset_capped", cookie: cookie).text
        XCTAssertTrue(refused.contains("No mail was sent"), refused)
        _ = try await sink.waitForMessages(3)
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(sink.received.count, 3, "no mail past the cap")
    }
}
