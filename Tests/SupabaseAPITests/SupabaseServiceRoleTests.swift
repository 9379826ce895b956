import Foundation
import PGClient
import SupabaseAPI
import TestSupport
import XCTest

/// The service role key: the app's owners add, change and delete quotes and pin days' quotes with any Supabase
/// client; the anon key and user tokens never can, and the key opens nothing on `/v1`.
final class SupabaseServiceRoleTests: XCTestCase {
    private var app: TestApp!

    override func setUp() async throws { app = try await TestApp.start() }
    override func tearDown() async throws { await app.stop() }

    private var serviceKey: String { app.application.context.configuration.supabaseServiceRoleKey }
    private var service: [String: String] {
        ["apikey": serviceKey, "Authorization": "Bearer \(serviceKey)", "Content-Type": "application/json"]
    }

    private func send(_ method: String, _ path: String, _ headers: [String: String], _ body: String? = nil) throws
        -> HTTPTestResponse
    {
        try app.client.send(method, path, headers: headers, body: body.map { Array($0.utf8) })
    }

    func testTheKeyIsSecretAndDistinct() {
        XCTAssertTrue(serviceKey.hasPrefix("sb_secret_"))
        XCTAssertNotEqual(serviceKey, app.anonKey)
        XCTAssertGreaterThanOrEqual(serviceKey.count, 40)
    }

    func testOwnersWriteQuotesAndOthersCannot() async throws {
        let user = try await app.makeUser()
        let quote = #"{"text":"Owners add quotes","author":"The Owner","category":"wisdom"}"#
        let prefer = ["Prefer": "return=representation", "Accept": "application/vnd.pgrst.object+json"]
        for (headers, status) in [
            (app.supabaseHeaders(nil, ["Content-Type": "application/json"]), 401),
            (app.supabaseHeaders(user, ["Content-Type": "application/json"]), 403),
            (
                [
                    "apikey": serviceKey, "Authorization": "Bearer \(user.accessToken)",
                    "Content-Type": "application/json",
                ], 403
            ),
        ] {
            let refused = try send("POST", "/rest/v1/quotes", headers.merging(prefer) { $1 }, quote)
            XCTAssertEqual(refused.status, status)
            XCTAssertEqual(try refused.jsonObject()["code"] as? String, "42501")
        }
        let total = try await app.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM quotes")[0].decode("n", as: Int.self)
        }
        XCTAssertEqual(total, 0)

        let created = try send("POST", "/rest/v1/quotes?select=%2A", service.merging(prefer) { $1 }, quote)
        XCTAssertEqual(created.status, 201)
        let id = try XCTUnwrap(try created.jsonObject()["id"] as? String)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["author"] as? String, "The Owner")
        let invalid = try send("POST", "/rest/v1/quotes", service, #"{"text":"x","author":"y","category":"nonsense"}"#)
        XCTAssertEqual(invalid.status, 400)
        XCTAssertEqual(try invalid.jsonObject()["code"] as? String, "23514")

        let changed = try send(
            "PATCH", "/rest/v1/quotes?id=eq.\(id.uppercased())", service.merging(prefer) { $1 },
            #"{"category":"humor"}"#)
        XCTAssertEqual(try changed.jsonObject()["category"] as? String, "humor")
        XCTAssertEqual(
            try send(
                "PATCH", "/rest/v1/quotes?id=eq.\(id)", app.supabaseHeaders(user, ["Content-Type": "application/json"]),
                #"{"category":"love"}"#
            ).status, 403)

        // Pin a date that has no quote yet; /v1 serves it. A chosen date stays as it was.
        let date = "2031-05-04"
        let pinned = try send(
            "POST", "/rest/v1/quote_of_day", service.merging(["Prefer": "return=representation"]) { $1 },
            #"{"date":"\#(date)","quote_id":"\#(id)"}"#)
        XCTAssertEqual(pinned.status, 201)
        XCTAssertEqual(
            try send(
                "POST", "/rest/v1/quote_of_day", app.supabaseHeaders(user, ["Content-Type": "application/json"]),
                #"{"date":"2031-05-05","quote_id":"\#(id)"}"#
            ).status, 403)
        for (method, path, body, prefer) in [
            ("PATCH", "/rest/v1/quote_of_day?date=eq.\(date)", #"{"quote_id":"\#(id)"}"#, ""),
            ("DELETE", "/rest/v1/quote_of_day?date=eq.\(date)", nil, ""),
            (
                "POST", "/rest/v1/quote_of_day", #"{"date":"\#(date)","quote_id":"\#(id)"}"#,
                "resolution=merge-duplicates"
            ),
        ] {
            let refused = try send(method, path, service.merging(["Prefer": prefer]) { $1 }, body)
            XCTAssertEqual(refused.status, 403, "\(method) \(path)")
        }
        // A quote that has been a quote of the day is kept as shown; it cannot be deleted either.
        let frozen = try send("PATCH", "/rest/v1/quotes?id=eq.\(id)", service, #"{"text":"Rewritten"}"#)
        XCTAssertEqual(frozen.status, 409)
        XCTAssertEqual(try send("DELETE", "/rest/v1/quotes?id=eq.\(id)", service).status, 409)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(id)").jsonObject()["text"] as? String, "Owners add quotes")

        let other = try send(
            "POST", "/rest/v1/quotes?select=id", service.merging(prefer) { $1 },
            #"{"text":"Short-lived","author":"The Owner","category":"love"}"#)
        let otherID = try XCTUnwrap(try other.jsonObject()["id"] as? String)
        XCTAssertEqual(try send("DELETE", "/rest/v1/quotes?id=eq.\(otherID)", app.supabaseHeaders(user)).status, 403)
        XCTAssertEqual(try send("DELETE", "/rest/v1/quotes?id=eq.\(otherID)", service).status, 204)
        XCTAssertEqual(try app.client.get("/v1/quotes/\(otherID)").status, 404)
    }

    func testTheKeyGrantsNothingOnV1AndNoProfileWrites() async throws {
        let user = try await app.makeUser()
        for path in ["/v1/me", "/v1/favorites", "/v1/collections"] {
            XCTAssertEqual(
                try app.client.get(path, headers: ["Authorization": "Bearer \(serviceKey)"]).status, 401, path)
        }
        XCTAssertEqual(try send("GET", "/auth/v1/user", service).status, 401)
        let profile = try send("PATCH", "/rest/v1/profiles?id=eq.\(user.id)", service, #"{"display_name":"Owned"}"#)
        XCTAssertEqual(profile.status, 403)
        // A forged "service role" token is just an invalid JWT.
        let forged = try send(
            "POST", "/rest/v1/quotes",
            [
                "apikey": app.anonKey, "Authorization": "Bearer sb_secret_guess",
                "Content-Type": "application/json",
            ], #"{"text":"a","author":"b","category":"love"}"#)
        XCTAssertEqual(forged.status, 401)
    }
}
