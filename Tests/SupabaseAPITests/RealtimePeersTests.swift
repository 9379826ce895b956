import Foundation
import QuoteVault
import XCTest

@testable import SupabaseAPI

/// What one instance keeps of the others (RealtimePeers): presences by `phx_ref`, re-announcements that change
/// nothing, sockets per user summed over instances, what a reconnected listener drops, and the lease.
final class RealtimePeersTests: XCTestCase {
    private func member(_ key: String, _ ref: String) -> PresenceMember {
        PresenceMember(key: key, meta: .object(["phx_ref": .string(ref)]))
    }

    private func keys(_ members: [PresenceMember]) -> [String] { members.map(\.key).sorted() }

    func testPresencesSocketsReconnectionAndLease() {
        var peers = RealtimePeers()
        let start = ContinuousClock.now
        let ada = UUID()

        var heard = peers.receive(.track(topic: "t", member: member("ada", "1"), replaces: nil), from: "a", at: start)
        XCTAssertTrue(heard.isNew)
        XCTAssertEqual(heard.diffs.map(\.topic), ["t"])
        XCTAssertEqual(keys(heard.diffs[0].joins), ["ada"])
        heard = peers.receive(.track(topic: "t", member: member("ada", "1"), replaces: nil), from: "a", at: start)
        XCTAssertFalse(heard.isNew)
        XCTAssertTrue(heard.diffs.isEmpty, "a re-announcement changes nothing")
        heard = peers.receive(.track(topic: "t", member: member("ada", "2"), replaces: "1"), from: "a", at: start)
        XCTAssertEqual(keys(heard.diffs[0].joins), ["ada"])
        XCTAssertEqual(heard.diffs[0].leaves.map(\.ref), ["1"])
        _ = peers.receive(.track(topic: "t", member: member("bob", "3"), replaces: nil), from: "a", at: start)
        XCTAssertEqual(keys(peers.members(of: "t")), ["ada", "bob"])

        _ = peers.receive(.sockets(user: ada, count: 2), from: "a", at: start)
        _ = peers.receive(.sockets(user: ada, count: 3), from: "b", at: start)
        XCTAssertEqual(peers.sockets(of: ada), 5)
        _ = peers.receive(.sockets(user: ada, count: 0), from: "b", at: start)
        XCTAssertEqual(peers.sockets(of: ada), 2)

        // After a reconnection: "a" re-announces bob only, not ada nor its sockets; its `synced` drops them.
        peers.refresh(nonce: "n")
        _ = peers.receive(.track(topic: "t", member: member("bob", "3"), replaces: nil), from: "a", at: start)
        XCTAssertTrue(peers.receive(.synced(nonce: "other"), from: "a", at: start).diffs.isEmpty)
        heard = peers.receive(.synced(nonce: "n"), from: "a", at: start)
        XCTAssertEqual(heard.diffs.flatMap(\.leaves).map(\.ref), ["2"])
        XCTAssertEqual(keys(peers.members(of: "t")), ["bob"])
        XCTAssertEqual(peers.sockets(of: ada), 0)

        // "b" keeps talking, "a" falls silent: only "a" is dropped past the lease, its members leaving.
        _ = peers.receive(.track(topic: "u", member: member("cy", "4"), replaces: nil), from: "b", at: start)
        XCTAssertTrue(peers.expire(at: start + .seconds(10), lease: .seconds(10)).isEmpty, "within the lease")
        _ = peers.receive(.alive, from: "b", at: start + .seconds(8))
        let expired = peers.expire(at: start + .seconds(11), lease: .seconds(10))
        XCTAssertEqual(expired.flatMap(\.leaves).map(\.ref), ["3"])
        XCTAssertEqual(peers.count, 1)
        XCTAssertTrue(peers.receive(.alive, from: "a", at: start + .seconds(12)).isNew, "back: asked again")

        // A bye: "b"'s members leave at once.
        heard = peers.receive(.bye, from: "b", at: start + .seconds(12))
        XCTAssertEqual(heard.diffs.flatMap(\.leaves).map(\.ref), ["4"])
        XCTAssertTrue(peers.members(of: "u").isEmpty)
    }

    func testMessagesRoundTripAndMalformedOnesAreIgnored() throws {
        let user = UUID()
        let messages: [RealtimePeerMessage] = [
            .alive, .hello(to: "x", nonce: "n"), .track(topic: "t", member: member("k", "r"), replaces: "q"),
            .untrack(topic: "t", ref: "r"), .sockets(user: user, count: 3), .synced(nonce: "n"), .bye,
        ]
        for message in messages {
            let text = message.encoded(origin: "o")
            XCTAssertLessThan(text.utf8.count, 8_000)
            let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            let decoded = try XCTUnwrap(RealtimePeerMessage.decode(value), text)
            XCTAssertEqual(decoded.origin, "o")
            XCTAssertEqual(decoded.message.encoded(origin: "o"), text)
        }
        for text in [
            #"{"origin":"o","peer":"track","topic":"t","key":"k","meta":{}}"#,
            #"{"origin":"o","peer":"sockets","user":"nope","count":1}"#,
            #"{"origin":"o","peer":"sockets","user":"\#(user.uuidString)","count":-1}"#,
            #"{"origin":"o","peer":"unknown"}"#, #"{"origin":"o","broadcast":"{}","topic":"t"}"#,
        ] {
            let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            XCTAssertNil(RealtimePeerMessage.decode(value), text)
        }
    }
}
