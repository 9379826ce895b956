import Foundation
import TestSupport
import XCTest

/// Reset mail (issue 30, item 4): at most 3 requests per recipient and 10 per source address an hour, counted in
/// PostgreSQL across both doors (`/v1/auth/password-reset`, `/auth/v1/recover`); past either, `429` and no mail,
/// the same answer whether or not the address has an account.
final class ResetMailLimitTests: XCTestCase {
    enum Door: CaseIterable { case v1, auth }

    private func start() async throws -> TestApp {
        try await TestApp.start {
            $0.smtpURL = "smtp://127.0.0.1:1"  // mail stays in the outbox, where the test counts it
            $0.httpRefusalDelay = 0
        }
    }

    /// One reset request for `email` from the loopback address `source`.
    private func ask(_ app: TestApp, _ door: Door, _ email: String, from source: String = "127.0.0.1") throws
        -> HTTPTestResponse
    {
        let connection = try HTTPTestConnection(port: app.application.port, source: source)
        defer { connection.close() }
        let body = Array(try JSONSerialization.data(withJSONObject: ["email": email]))
        switch door {
        case .v1:
            return try connection.send(
                "POST", "/v1/auth/password-reset",
                headers: ["Content-Type": "application/json"], body: body)
        case .auth:
            return try connection.send(
                "POST", "/auth/v1/recover",
                headers: [
                    "Content-Type": "application/json", "apikey": app.anonKey, "Authorization": "Bearer \(app.anonKey)",
                ], body: body)
        }
    }

    private func accepted(_ response: HTTPTestResponse, _ door: Door) -> Bool {
        response.status == (door == .v1 ? 202 : 200)
    }

    /// 429 with Retry-After, in the door's dialect; the body without anything that depends on the email.
    private func assertLimited(
        _ response: HTTPTestResponse, _ door: Door, _ context: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertEqual(response.status, 429, "\(context): \(response.text)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(Int(response.header("Retry-After") ?? "") ?? 0, 1, context, file: file, line: line)
        let code = try response.jsonObject()["code"] as? String
        XCTAssertEqual(code, door == .v1 ? "rate_limited" : "over_request_rate_limit", context, file: file, line: line)
    }

    private func mails(_ app: TestApp, to email: String) async throws -> Int {
        try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM mail_outbox WHERE recipient = \(email)")[0]
                .decode("n", as: Int.self)
        }
    }

    func testThreeMailsPerRecipientAnHourOnBothDoorsThen429WhetherOrNotTheAccountExists() async throws {
        let app = try await start()
        let member = try await app.makeUser(email: "member@example.com")
        for email in [member.email, "nobody@example.com"] {
            for (index, door) in [Door.v1, .auth, .v1].enumerated() {
                let response = try ask(app, door, email)
                XCTAssertTrue(accepted(response, door), "request \(index + 1) for \(email): \(response.text)")
            }
            for door in Door.allCases {
                try assertLimited(try ask(app, door, email), door, "the fourth for \(email)")
            }
        }
        let memberMails = try await mails(app, to: member.email)
        XCTAssertEqual(memberMails, 3, "no mail past the limit")
        let strangerMails = try await mails(app, to: "nobody@example.com")
        XCTAssertEqual(strangerMails, 0)
        XCTAssertTrue(accepted(try ask(app, .auth, "someone-else@example.com"), .auth), "other recipients go on")
        await app.stop()
    }

    func testTenRequestsPerSourceAddressAnHourOnBothDoorsThen429ForEveryAddressAsked() async throws {
        let app = try await start()
        let members = try await (0..<6).asyncMap { try await app.makeUser(email: "member\($0)@example.com") }
        let source = "127.0.0.2"
        for index in 0..<10 {
            let email = index < 5 ? members[index].email : "stranger\(index)@example.com"
            let door = Door.allCases[index % 2]
            XCTAssertTrue(accepted(try ask(app, door, email, from: source), door), "request \(index + 1)")
        }
        // The eleventh, for an account or not, on either door: the same refusal, and no mail.
        var bodies: Set<String> = []
        for door in Door.allCases {
            for email in [members[5].email, "stranger-past@example.com"] {
                let refused = try ask(app, door, email, from: source)
                try assertLimited(refused, door, "the eleventh from \(source) for \(email)")
                bodies.insert("\(door) \(refused.text)")
            }
        }
        XCTAssertEqual(bodies.count, 2, "one answer per door whatever email is asked: \(bodies)")
        let pastMails = try await mails(app, to: members[5].email)
        XCTAssertEqual(pastMails, 0)
        let sent = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM mail_outbox")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(sent, 5, "one mail per member asked within the limit")
        let elsewhere = try ask(app, .v1, members[5].email, from: "127.0.0.3")
        XCTAssertTrue(accepted(elsewhere, .v1), "another address is not limited: \(elsewhere.text)")
        await app.stop()
    }
}

extension Sequence {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
