import Foundation
import TestSupport
import XCTest

/// Token expiry among many sockets (the hub keeps each token's `exp` in a deadline queue instead of scanning every
/// socket): a socket's channels close at its own token's expiry and no one else's; a token swapped for a longer one
/// is not closed at the old one's expiry, and one swapped for a shorter one is closed at the new one's.
final class RealtimeExpiryTests: XCTestCase {
    private func favorites(of user: TestUser) -> [[String: Any]] {
        [["event": "*", "schema": "public", "table": "user_favorites", "filter": "user_id=eq.\(lower(user.id))"]]
    }

    private func expiry(_ socket: WebSocketTestClient, within seconds: Double) -> String? {
        let system = socket.nextMessage(within: seconds) {
            !($0["event"] as? String == "system" && ($0["payload"] as? [String: Any])?["status"] as? String == "error")
        }
        return (system?["payload"] as? [String: Any])?["message"] as? String
    }

    /// A socket joined to `topic` on `user`'s favorites with a token that expires in `seconds`.
    private func joined(_ app: TestApp, _ topic: String, as user: TestUser, expiresIn seconds: Int) throws
        -> WebSocketTestClient
    {
        let socket = try app.realtime()
        let token = try app.token(for: user, expiresIn: seconds)
        XCTAssertEqual(status(socket.join(topic, changes: favorites(of: user), token: token)), "ok")
        return socket
    }

    /// Swaps the socket's token on `topic` for `token`; the swap is answered `ok`.
    private func swapToken(_ socket: WebSocketTestClient, _ topic: String, _ token: String) {
        XCTAssertEqual(status(socket.reply(to: socket.push(topic, "access_token", ["access_token": token]))), "ok")
    }

    func testEachSocketClosesAtItsOwnTokensExpiry() async throws {
        let app = try await startTestApp()
        let user = try await app.makeUser()
        let quotes = try await app.insertQuotes(["One"])
        let bystanders = try (0..<10).map { try joined(app, "realtime:b\($0)", as: user, expiresIn: 7200) }
        let brief = try joined(app, "realtime:brief", as: user, expiresIn: 2)
        let extended = try joined(app, "realtime:extended", as: user, expiresIn: 2)
        swapToken(extended, "realtime:extended", try app.token(for: user, expiresIn: 7200))
        let shortened = try joined(app, "realtime:shortened", as: user, expiresIn: 7200)
        swapToken(shortened, "realtime:shortened", try app.token(for: user, expiresIn: 4))

        XCTAssertEqual(expiry(brief, within: 15), "Token has expired")
        XCTAssertEqual(brief.next("phx_close")?["topic"] as? String, "realtime:brief")
        XCTAssertEqual(expiry(shortened, within: 15), "Token has expired")
        XCTAssertEqual(shortened.next("phx_close")?["topic"] as? String, "realtime:shortened")

        // Past the first token's expiry, the swapped socket and the bystanders still deliver.
        XCTAssertEqual(
            try app.client.send("PUT", "/v1/favorites/\(lower(quotes[0]))", headers: user.authorization).status, 201)
        for socket in bystanders + [extended] {
            let change = socket.nextMessage {
                $0["event"] as? String != "postgres_changes"
                    && !($0["event"] as? String == "system"
                        && ($0["payload"] as? [String: Any])?["status"] as? String == "error")
            }
            XCTAssertEqual(change?["event"] as? String, "postgres_changes")
        }
        XCTAssertTrue(brief.staysQuiet(for: 0.3) { $0["event"] as? String != "postgres_changes" })
    }
}
