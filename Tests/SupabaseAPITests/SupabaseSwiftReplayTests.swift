import Foundation
import PGClient
@testable import SupabaseAPI
import TestSupport
import XCTest

/// supabase-swift 2.55.1 (the app's own client) replayed request by request as it sends them (headers, header
/// spellings, percent-encoding, uppercase UUIDs, bodies), for every call of issue 15's log that failed or lost
/// data; each answer is checked against what Supabase answers and against the database.
final class SupabaseSwiftReplayTests: XCTestCase {
    private var app: TestApp!

    override func setUp() async throws { app = try await TestApp.start() }
    override func tearDown() async throws { await app.stop() }

    /// The headers supabase-swift sends to /rest/v1 (its GETs carry a JSON Content-Type too).
    private func swiftHeaders(_ user: TestUser, _ extra: [String: String] = [:]) -> [String: String] {
        [
            "Accept-Encoding": "deflate, gzip, br, zstd", "X-Client-Info": "supabase-swift/2.55.1; platform=Linux",
            "Accept": "application/json", "Authorization": "Bearer \(user.accessToken)", "Apikey": app.anonKey,
            "Content-Type": "application/json", "Connection": "keep-alive",
            "User-Agent": "sbclient (unknown version) curl/7.88.1",
            "Accept-Language": "en",
        ].merging(extra) { $1 }
    }

    private func send(
        _ method: String, _ path: String, _ user: TestUser, _ body: String? = nil,
        _ extra: [String: String] = [:]
    ) throws -> HTTPTestResponse {
        try app.client.send(method, path, headers: swiftHeaders(user, extra), body: body.map { Array($0.utf8) })
    }

    private let object = ["Accept": "application/vnd.pgrst.object+json"]

    private func storedPreferences(_ user: TestUser) async throws -> String {
        try await app.withConnection {
            try $0.query("SELECT preferences::text AS p FROM profiles WHERE id = \(user.id)")[0].decode(
                "p", as: String.self)
        }
    }

    private func json(_ text: String) throws -> NSDictionary {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
    }

    // #388, #389, #391: the app's Codable preferences (camelCase) are stored and read back as written.
    func testPreferencesInTheAppsSpellingReadBackIdentically() async throws {
        let user = try await app.makeUser()
        let id = user.id.uuidString  // uppercase, as UUID.uuidString
        let prefs =
            #"{"notificationEnabled":true,"notificationTime":"08:30","colorScheme":"dark","#
            + #""accentColor":"purple","fontSize":"large"}"#
        let patch = try send(
            "PATCH", "/rest/v1/profiles?id=eq.\(id)", user, #"{"preferences":\#(prefs),"display_name":"Alice Q"}"#,
            ["Prefer": "return=representation"])
        XCTAssertEqual(patch.status, 200)
        XCTAssertEqual(patch.jsonArray.first?["preferences"] as? NSDictionary, try json(prefs))
        let read = try send("GET", "/rest/v1/profiles?select=%2A&id=eq.\(id)", user, nil, object)
        XCTAssertEqual(read.status, 200)
        XCTAssertEqual(try read.jsonObject()["preferences"] as? NSDictionary, try json(prefs))
        XCTAssertEqual(try read.jsonObject()["display_name"] as? String, "Alice Q")
        // /v1/me shows the documented (snake_case) form of the same values.
        let me = try app.client.get("/v1/me", headers: user.authorization).jsonObject()
        XCTAssertEqual(
            me["preferences"] as? NSDictionary,
            [
                "color_scheme": "dark", "accent_color": "purple", "font_size": "large", "notification_enabled": true,
                "notification_time": "08:30",
            ] as NSDictionary)
        // A /v1 change keeps the client's spelling, so the app reads its own keys back.
        _ = try app.client.send(
            "PATCH", "/v1/me", headers: user.authorization.merging(["Content-Type": "application/json"]) { $1 },
            body: Array(#"{"preferences":{"font_size":"small"}}"#.utf8))
        let after = try send("GET", "/rest/v1/profiles?select=preferences&id=eq.\(id)", user, nil, object)
        XCTAssertEqual((try after.jsonObject()["preferences"] as? [String: Any])?["fontSize"] as? String, "small")
        XCTAssertNil((try after.jsonObject()["preferences"] as? [String: Any])?["font_size"])

        // Bad values and a preference given in both spellings: 400 in PostgREST's shape, nothing stored.
        let before = try await storedPreferences(user)
        for bad in [
            #"{"preferences":{"colorScheme":"sepia"}}"#, #"{"preferences":{"notificationTime":"25:00"}}"#,
            #"{"preferences":{"fontSize":"large","font_size":"small"}}"#, #"{"preferences":[1]}"#,
            #"{"preferences":{"notificationEnabled":"yes"},"display_name":"Changed"}"#,
        ] {
            let refused = try send(
                "PATCH", "/rest/v1/profiles?id=eq.\(id)", user, bad, ["Prefer": "return=representation"])
            XCTAssertEqual(refused.status, 400, bad)
            let error = try refused.jsonObject()
            XCTAssertNotNil(error["message"] as? String)
            XCTAssertNotNil(error["code"] as? String)
            XCTAssertTrue(error.keys.contains("details") && error.keys.contains("hint"))
            let stored = try await storedPreferences(user)
            XCTAssertEqual(stored, before, bad)
        }
        let name = try app.client.get("/v1/me", headers: user.authorization).jsonObject()["display_name"] as? String
        XCTAssertEqual(name, "Alice Q")
    }

    // #401: upsert(...).select().single() on one's profile answers one object, as merged.
    func testProfileUpsertAnswersOneObject() async throws {
        let user = try await app.makeUser()
        let body =
            #"{"id":"\#(user.id.uuidString)","preferences":{"notificationTime":"08:30","fontSize":"large","#
            + #""notificationEnabled":true,"colorScheme":"dark","accentColor":"purple"},"#
            + #""display_name":"Alice V"}"#
        let upsert = try send(
            "POST", "/rest/v1/profiles?select=%2A", user, body,
            [
                "Prefer": "resolution=merge-duplicates,return=representation",
                "Accept": "application/vnd.pgrst.object+json",
            ])
        XCTAssertEqual(upsert.status, 200)
        let row = try upsert.jsonObject()
        XCTAssertEqual(row["id"] as? String, user.id.uuidString.lowercased())
        XCTAssertEqual(row["display_name"] as? String, "Alice V")
        XCTAssertEqual((row["preferences"] as? [String: Any])?["accentColor"] as? String, "purple")
        XCTAssertTrue(row.keys.contains("avatar_url"))
    }

    // #446, #447: favorites upsert twice; the second merges and answers the existing row.
    func testFavoriteUpsertTwiceAnswersTheRow() async throws {
        let user = try await app.makeUser()
        let quote = try await app.insertQuotes(["Replayed favorite"])[0]
        let prefer = ["Prefer": "resolution=merge-duplicates,return=representation"]
        let first = try send(
            "POST", "/rest/v1/user_favorites?on_conflict=user_id%2Cquote_id", user,
            #"{"quote_id":"\#(quote.uuidString)","user_id":"\#(user.id.uuidString)"}"#, prefer)
        XCTAssertEqual(first.status, 201)
        let second = try send(
            "POST", "/rest/v1/user_favorites?on_conflict=user_id%2Cquote_id", user,
            #"{"user_id":"\#(user.id.uuidString)","quote_id":"\#(quote.uuidString)"}"#, prefer)
        XCTAssertEqual(second.status, 200)
        XCTAssertEqual(second.jsonArray.count, 1)
        XCTAssertEqual(second.jsonArray.first?["quote_id"] as? String, quote.uuidString.lowercased())
        XCTAssertEqual(
            second.jsonArray.first?["created_at"] as? String, first.jsonArray.first?["created_at"] as? String)
    }

    // #452, #458: insert(...).select().single(), then the list with collection_quotes(count).
    func testCollectionInsertSingleAndQuoteCounts() async throws {
        let user = try await app.makeUser(), other = try await app.makeUser()
        let quotes = try await app.insertQuotes(["C one", "C two", "C three"])
        let created = try send(
            "POST", "/rest/v1/collections?select=%2A", user,
            #"{"user_id":"\#(user.id.uuidString)","name":"Morning"}"#,
            ["Accept": "application/vnd.pgrst.object+json", "Prefer": "return=representation"])
        XCTAssertEqual(created.status, 201)
        let collection = try XCTUnwrap(try created.jsonObject()["id"] as? String)
        XCTAssertEqual(try created.jsonObject()["name"] as? String, "Morning")
        _ = try send("POST", "/rest/v1/collections", user, #"{"user_id":"\#(user.id.uuidString)","name":"Empty"}"#)
        let entries = quotes.map { #"{"collection_id":"\#(collection.uppercased())","quote_id":"\#($0.uuidString)"}"# }
        XCTAssertEqual(
            try send("POST", "/rest/v1/collection_quotes", user, "[\(entries.joined(separator: ","))]").status, 201)
        // Another user's collection with quotes of its own changes nothing in these counts.
        let theirs = try send(
            "POST", "/rest/v1/collections?select=id", other, #"{"name":"Theirs"}"#,
            ["Accept": "application/vnd.pgrst.object+json", "Prefer": "return=representation"])
        let theirID = try XCTUnwrap(try theirs.jsonObject()["id"] as? String)
        _ = try send(
            "POST", "/rest/v1/collection_quotes", other,
            #"{"collection_id":"\#(theirID)","quote_id":"\#(quotes[0].uuidString)"}"#)

        let list = try send(
            "GET",
            "/rest/v1/collections?select=%2A%2Ccollection_quotes%28count%29&user_id=eq.\(user.id.uuidString)"
                + "&order=created_at.desc.nullslast",
            user)
        XCTAssertEqual(list.status, 200)
        let counts = Dictionary(
            uniqueKeysWithValues: list.jsonArray.map {
                (
                    $0["name"] as? String ?? "",
                    (($0["collection_quotes"] as? [[String: Any]])?.first?["count"] as? Int) ?? -1
                )
            })
        XCTAssertEqual(counts, ["Morning": 3, "Empty": 0])
        let aliased = try send(
            "GET", "/rest/v1/collections?select=name%2Centries%3Acollection_quotes%28total%3Acount%29&name=eq.Morning",
            user)
        XCTAssertEqual((aliased.jsonArray.first?["entries"] as? [[String: Any]])?.first?["total"] as? Int, 3)
    }

    // #421: textSearch(text, "love", type: .websearch), and the other full-text operators.
    func testFullTextOperatorsOnQuotes() async throws {
        let user = try await app.makeUser()
        _ = try await app.insertQuotes(
            ["All you need is love", "Loving others is wisdom", "The quick brown fox"], author: "Jane Loveday")
        _ = try await app.insertQuotes(["Nothing to see"], author: "Mark Twain")
        func texts(_ query: String) throws -> Set<String> {
            let page = try send("GET", "/rest/v1/quotes?select=%2A&\(query)&limit=20", user)
            XCTAssertEqual(page.status, 200, query)
            return Set(page.jsonArray.compactMap { $0["text"] as? String })
        }
        XCTAssertEqual(try texts("text=wfts.love"), ["All you need is love", "Loving others is wisdom"])
        XCTAssertEqual(try texts("text=fts%28english%29.love%20%26%20need"), ["All you need is love"])
        XCTAssertEqual(try texts("text=plfts.quick%20fox"), ["The quick brown fox"])
        XCTAssertEqual(try texts("text=phfts.brown%20quick"), [])
        XCTAssertEqual(try texts("text=phfts%28simple%29.quick%20brown"), ["The quick brown fox"])
        XCTAssertEqual(try texts("author=wfts.twain"), ["Nothing to see"])
        XCTAssertEqual(try texts("text=not.wfts.love&author=wfts.loveday"), ["The quick brown fox"])
        XCTAssertEqual(
            try texts("or=%28text.wfts.fox%2Cauthor.fts.twain%29"), ["The quick brown fox", "Nothing to see"])
        for bad in [
            "category=wfts.love", "text=fts%28german%29.liebe", "text=fts.%28%28", "text=eq%28english%29.love",
            "text=wfts." + String(repeating: "a", count: 201),
        ] {
            let refused = try send("GET", "/rest/v1/quotes?select=%2A&\(bad)", user)
            XCTAssertEqual(refused.status, 400, bad)
            XCTAssertNotNil(try refused.jsonObject()["code"] as? String)
        }
    }

    /// The SQL the server builds for each full-text operator and configuration is served by the expression index
    /// (sequential scans disabled, so a plan that cannot use the index would still show a Seq Scan).
    func testFullTextSearchUsesTheIndexes() async throws {
        _ = try await app.insertQuotes((0..<50).map { "Indexed quote \($0) about love" })
        for (column, filter) in [
            ("text", "wfts.love"), ("text", "fts(english).love"), ("author", "plfts(simple).author"),
            ("text", "phfts.about love"),
        ] {
            let query = try RestQuery.parse([(column, filter)])
            let sql = RestSQL(caller: .anonymous)
            let explain = PGQuery(unsafeSQL: "EXPLAIN ") + (try sql.read(query, from: try sql.table("quotes")))
            let plan = try await app.withConnection { connection -> String in
                try connection.query("SET enable_seqscan = off")
                defer { _ = try? connection.query("RESET enable_seqscan") }
                return try connection.query(explain).map { try $0.decode("QUERY PLAN", as: String.self) }.joined(
                    separator: "\n")
            }
            XCTAssertFalse(plan.contains("Seq Scan"), "\(column)=\(filter):\n\(plan)")
            XCTAssertTrue(plan.contains("_fts_"), "\(column)=\(filter):\n\(plan)")
        }
    }

    // #482 and the avatar upload: profiles.avatar_url, the same value /v1/me shows.
    func testAvatarURLIsOwnerWritableAndSetByUploads() async throws {
        let user = try await app.makeUser()
        let lower = user.id.uuidString.lowercased()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 3, count: 40)
        let upload = try app.client.send(
            "POST", "/storage/v1/object/avatars/\(lower)/avatar.png",
            headers: swiftHeaders(user, ["Content-Type": "image/png", "x-upsert": "true"]), body: png)
        XCTAssertEqual(upload.status, 200)
        let me = try app.client.get("/v1/me", headers: user.authorization).jsonObject()["avatar_url"] as? String
        let base = app.application.context.configuration.publicURL
        XCTAssertTrue(me?.hasPrefix("\(base)/v1/avatars/\(lower)?v=") ?? false, me ?? "nil")
        let row = try send("GET", "/rest/v1/profiles?select=avatar_url&id=eq.\(user.id.uuidString)", user, nil, object)
        XCTAssertEqual(try row.jsonObject()["avatar_url"] as? String, me)

        let publicURL = #"http:\/\/127.0.0.1:18091\/storage\/v1\/object\/public\/avatars\/\#(lower)\/avatar.png"#
        let patch = try send(
            "PATCH", "/rest/v1/profiles?id=eq.\(user.id.uuidString)", user, #"{"avatar_url":"\#(publicURL)"}"#,
            ["Prefer": "return=representation"])
        XCTAssertEqual(patch.status, 200)
        let expected = "http://127.0.0.1:18091/storage/v1/object/public/avatars/\(lower)/avatar.png"
        XCTAssertEqual(patch.jsonArray.first?["avatar_url"] as? String, expected)
        XCTAssertEqual(
            try app.client.get("/v1/me", headers: user.authorization).jsonObject()["avatar_url"] as? String, expected)
        let tooLong = try send(
            "PATCH", "/rest/v1/profiles?id=eq.\(user.id.uuidString)", user,
            #"{"avatar_url":"\#(String(repeating: "x", count: 2049))"}"#)
        XCTAssertEqual(tooLong.status, 400)
        XCTAssertEqual(
            try app.client.get("/v1/me", headers: user.authorization).jsonObject()["avatar_url"] as? String, expected)
        // Another user cannot write it.
        let other = try await app.makeUser()
        let foreign = try send(
            "PATCH", "/rest/v1/profiles?id=eq.\(user.id.uuidString)", other, #"{"avatar_url":"x"}"#,
            ["Prefer": "return=representation"])
        XCTAssertEqual(foreign.jsonArray.count, 0)
        XCTAssertEqual(
            try app.client.get("/v1/me", headers: user.authorization).jsonObject()["avatar_url"] as? String, expected)
    }

    // Storage cacheControl (form part, header) sets the served max-age; HEAD counts without a body.
    func testUploadCacheControlAndHeadCounts() async throws {
        let user = try await app.makeUser()
        let lower = user.id.uuidString.lowercased()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 5, count: 40)
        func form(_ cacheControl: String) -> [UInt8] {
            let b = "swift-boundary"
            return Array(
                ("--\(b)\r\nContent-Disposition: form-data; name=\"cacheControl\"\r\n\r\n\(cacheControl)\r\n--\(b)\r\n"
                    + "Content-Disposition: form-data; name=\"\"; filename=\"avatar.png\"\r\n"
                    + "Content-Type: image/png\r\n\r\n")
                    .utf8)
                + png + Array("\r\n--\(b)--\r\n".utf8)
        }
        func upload(_ cacheControl: String) throws -> HTTPTestResponse {
            try app.client.send(
                "POST", "/storage/v1/object/avatars/\(lower)/avatar.png",
                headers: swiftHeaders(
                    user, ["Content-Type": "multipart/form-data; boundary=swift-boundary", "x-upsert": "true"]),
                body: form(cacheControl))
        }
        func servedMaxAge() throws -> String? {
            try app.client.get("/storage/v1/object/public/avatars/\(lower)/avatar.png").header("Cache-Control")
        }
        XCTAssertEqual(try upload("60").status, 200)
        XCTAssertEqual(try servedMaxAge(), "max-age=60")
        XCTAssertEqual(try upload("31536000").status, 200)
        XCTAssertEqual(try servedMaxAge(), "max-age=31536000")
        for bad in ["31536001", "-1", "soon"] {
            XCTAssertEqual(try upload(bad).status, 400, bad)
            XCTAssertEqual(try servedMaxAge(), "max-age=31536000", bad)
        }
        let raw = try app.client.send(
            "PUT", "/storage/v1/object/avatars/\(lower)/avatar.png",
            headers: swiftHeaders(user, ["Content-Type": "image/png", "Cache-Control": "max-age=120"]), body: png)
        XCTAssertEqual(raw.status, 200)
        XCTAssertEqual(try servedMaxAge(), "max-age=120")

        _ = try await app.insertQuotes((0..<7).map { "Head \($0)" }, category: "love")
        let head = try app.client.send(
            "HEAD", "/rest/v1/quotes?select=%2A&category=eq.love&limit=5",
            headers: swiftHeaders(user, ["Prefer": "count=exact"]))
        XCTAssertEqual(head.status, 206)
        XCTAssertEqual(head.header("Content-Range"), "0-4/7")
        XCTAssertTrue(head.body.isEmpty)
        let unknown = try app.client.send(
            "HEAD", "/rest/v1/quotes?select=nope", headers: swiftHeaders(user, ["Prefer": "count=exact"]))
        XCTAssertEqual(unknown.status, 400)
    }
}
