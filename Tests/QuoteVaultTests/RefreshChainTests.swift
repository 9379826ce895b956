import AuthJWT
import Foundation
import PGClient
import TestSupport
import XCTest

/// One refresh token never becomes several sessions (issue 24), on `/v1/auth/refresh` and on
/// `/auth/v1/token?grant_type=refresh_token`, across instances sharing a database: within
/// REFRESH_TOKEN_REUSE_INTERVAL a rotated token is answered with the session's one live refresh token; later, its
/// reuse revokes that session and no other.
final class RefreshChainTests: XCTestCase {
    /// One of the two doors a refresh token is exchanged at, with its sign-up and its reuse refusal.
    private struct Door: Sendable {
        let name: String
        let refreshPath: String
        let reusedStatus: Int
        let reusedCode: String
        let invalidCode: String
        let supabase: Bool

        static let v1 = Door(
            name: "/v1", refreshPath: "/v1/auth/refresh", reusedStatus: 401,
            reusedCode: "refresh_token_reused", invalidCode: "refresh_token_invalid", supabase: false)
        static let auth = Door(
            name: "/auth/v1", refreshPath: "/auth/v1/token?grant_type=refresh_token", reusedStatus: 400,
            reusedCode: "refresh_token_already_used", invalidCode: "refresh_token_not_found", supabase: true)

        func headers(_ app: TestApp) -> [String: String] {
            supabase ? ["apikey": app.anonKey, "Authorization": "Bearer \(app.anonKey)"] : [:]
        }

        func refresh(_ token: String, port: Int, headers: [String: String]) throws -> HTTPTestResponse {
            try HTTPTestClient(port: port).send("POST", refreshPath, json: ["refresh_token": token], headers: headers)
        }

        /// A new session of `email` (signed up on first use, else logged in): its JSON.
        func session(_ app: TestApp, _ email: String, signUp: Bool = true) throws -> [String: Any] {
            let body = ["email": email, "password": "correct horse battery"]
            let path =
                supabase
                ? (signUp ? "/auth/v1/signup" : "/auth/v1/token?grant_type=password")
                : (signUp ? "/v1/auth/signup" : "/v1/auth/login")
            let response = try app.client.send("POST", path, json: body, headers: headers(app))
            XCTAssertTrue([200, 201].contains(response.status), "\(name) \(path): \(response.text)")
            return try response.jsonObject()
        }
    }

    private let doors: [Door] = [.v1, .auth]

    private func me(_ app: TestApp, _ accessToken: String) throws -> Int {
        try app.client.get("/v1/me", headers: ["Authorization": "Bearer \(accessToken)"]).status
    }

    /// How many refresh tokens the session of `token` holds.
    private func chainLength(_ app: TestApp, of token: String) async throws -> Int {
        try await app.withConnection { connection in
            try connection.query(
                """
                SELECT count(*)::int8 FROM refresh_tokens
                WHERE session_id = (SELECT session_id FROM refresh_tokens WHERE token_hash = \(OpaqueToken.hash(token)))
                """)[0].decode(at: 0, as: Int.self)
        }
    }

    func testParallelRefreshesOfOneTokenAnswerOneRefreshToken() async throws {
        let app = try await startTestApp()
        // A second instance on the same database: the refreshes are split between the two.
        let peer = try await startTestApp(databaseURL: app.databaseURL)
        let ports = [app.application.port, peer.application.port]
        for door in doors {
            for parallel in [10, 50] {
                let session = try door.session(app, "parallel-\(parallel)-\(door.supabase)@x.io")
                let token = try XCTUnwrap(session["refresh_token"] as? String)
                let answers = Locked<[(Int, String?, String?)]>([])
                let headers = door.headers(app)
                try onThreads(parallel) { index in
                    let response = try door.refresh(token, port: ports[index % 2], headers: headers)
                    let json = try? response.jsonObject()
                    let answer = (response.status, json?["refresh_token"] as? String, json?["access_token"] as? String)
                    answers.withLock { $0.append(answer) }
                }.wait()
                let all = answers.value
                XCTAssertEqual(all.count, parallel)
                XCTAssertEqual(all.map(\.0), Array(repeating: 200, count: parallel), "\(door.name) × \(parallel)")
                let distinct = Set(all.compactMap(\.1))
                XCTAssertEqual(distinct.count, 1, "\(door.name) × \(parallel): one refresh token among the answers")
                let child = try XCTUnwrap(distinct.first)
                XCTAssertNotEqual(child, token)
                for accessToken in Set(all.compactMap(\.2)) { XCTAssertEqual(try me(app, accessToken), 200) }
                // The session holds one chain: the rotated token and its one live child.
                let chain = try await chainLength(app, of: token)
                XCTAssertEqual(chain, 2, "\(door.name) × \(parallel)")
                // And the one answered token refreshes.
                let next = try door.refresh(child, port: ports[0], headers: headers)
                XCTAssertEqual(next.status, 200, next.text)
                XCTAssertNotEqual(try next.jsonObject()["refresh_token"] as? String, child)
            }
        }
    }

    func testReuseWithinTheIntervalAnswersTheChainsLiveToken() async throws {
        let app = try await startTestApp()
        for door in doors {
            let port = app.application.port
            let headers = door.headers(app)
            let session = try door.session(app, "sequential-\(door.supabase)@x.io")
            let first = try XCTUnwrap(session["refresh_token"] as? String)
            let rotation = try door.refresh(first, port: port, headers: headers)
            XCTAssertEqual(rotation.status, 200)
            let second = try XCTUnwrap(try rotation.jsonObject()["refresh_token"] as? String)
            // One after the other: the same token as the rotation, with a working access token.
            let again = try door.refresh(first, port: port, headers: headers)
            XCTAssertEqual(again.status, 200, door.name)
            XCTAssertEqual(try again.jsonObject()["refresh_token"] as? String, second, door.name)
            XCTAssertEqual(try me(app, try XCTUnwrap(try again.jsonObject()["access_token"] as? String)), 200)
            // Once the chain moved on, an earlier token within its interval answers the chain's live token.
            let next = try door.refresh(second, port: port, headers: headers)
            let third = try XCTUnwrap(try next.jsonObject()["refresh_token"] as? String)
            XCTAssertNotEqual(third, second)
            for earlier in [first, second] {
                let reuse = try door.refresh(earlier, port: port, headers: headers)
                XCTAssertEqual(reuse.status, 200, door.name)
                XCTAssertEqual(try reuse.jsonObject()["refresh_token"] as? String, third, door.name)
            }
            XCTAssertEqual(try door.refresh(third, port: port, headers: headers).status, 200)
        }
    }

    func testReuseAfterTheIntervalRevokesThatSessionOnly() async throws {
        let app = try await startTestApp()
        for door in doors {
            let port = app.application.port
            let headers = door.headers(app)
            let email = "late-\(door.supabase)@x.io"
            let stolen = try door.session(app, email)
            let sibling = try door.session(app, email, signUp: false)
            let stranger = try door.session(app, "stranger-\(door.supabase)@x.io")
            let first = try XCTUnwrap(stolen["refresh_token"] as? String)
            let rotated = try door.refresh(first, port: port, headers: headers).jsonObject()
            let live = try XCTUnwrap(rotated["refresh_token"] as? String)
            try await app.withConnection {
                try $0.query(
                    """
                    UPDATE refresh_tokens SET rotated_at = rotated_at - interval '11 seconds'
                    WHERE rotated_at IS NOT NULL
                    """)
            }
            let reuse = try door.refresh(first, port: port, headers: headers)
            XCTAssertEqual(reuse.status, door.reusedStatus, door.name)
            XCTAssertEqual(try reuse.jsonObject()["code"] as? String, door.reusedCode)
            // Every token of that session is dead: its live refresh token and its access tokens.
            let afterTheft = try door.refresh(live, port: port, headers: headers)
            XCTAssertEqual(try afterTheft.jsonObject()["code"] as? String, door.invalidCode, door.name)
            XCTAssertEqual(try me(app, try XCTUnwrap(rotated["access_token"] as? String)), 401)
            XCTAssertEqual(try me(app, try XCTUnwrap(stolen["access_token"] as? String)), 401)
            // The same user's other session and another user's session go on.
            for other in [sibling, stranger] {
                XCTAssertEqual(try me(app, try XCTUnwrap(other["access_token"] as? String)), 200, door.name)
                let token = try XCTUnwrap(other["refresh_token"] as? String)
                let refreshed = try door.refresh(token, port: port, headers: headers)
                XCTAssertEqual(refreshed.status, 200, door.name)
            }
        }
    }
}
