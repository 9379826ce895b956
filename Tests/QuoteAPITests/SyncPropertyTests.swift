import Foundation
import TestSupport
import XCTest

/// Two devices of one user edit offline, reconnect, lose answers and retry, and sync, in random seeded runs
/// over real HTTP. A model of the server applies every operation exactly once, in the order the server got it.
/// After a final sync both devices must hold exactly the server's library, the server must hold exactly the
/// model's (no operation applied twice, none lost), and every answer to a retried operation must be its first.
///
/// `SYNC_PROPERTY_SEED` and `SYNC_PROPERTY_RUNS` reproduce or widen a run; every run is bounded, and the whole
/// test stops starting runs after `SYNC_PROPERTY_SECONDS` (default 45).
final class SyncPropertyTests: XCTestCase {
    func testTwoOfflineDevicesConvergeOnTheServersLibrary() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["SYNC_PROPERTY_SEED"].flatMap(UInt64.init) ?? 0x5EED_2026
        let runs = environment["SYNC_PROPERTY_RUNS"].flatMap(Int.init) ?? 300
        let budget = Duration.seconds(environment["SYNC_PROPERTY_SECONDS"].flatMap(Int.init) ?? 45)
        // Every request opens a connection of its own, faster than the per-address new-connection rate allows
        // on a quick machine (a refused connection closes before any answer); that limit has tests of its own.
        let app = try await startTestApp {
            $0.rateLimitsEnabled = false
            $0.httpNewConnectionsPerAddress = 0
        }
        let quotes = try await app.insertQuotes((0..<5).map { "Property quote \($0)" }).map(lower)
        let started = ContinuousClock.now
        var completed = 0
        for run in 0..<runs where ContinuousClock.now - started < budget {
            let runSeed = seed &+ UInt64(run)
            var scenario = Scenario(
                app: app, user: try await app.makeUser(), quotes: quotes, generator: SplitMix64(seed: runSeed))
            do {
                try scenario.play()
            } catch {
                XCTFail("seed \(runSeed) (SYNC_PROPERTY_SEED=\(seed), run \(run)): \(error)")
                break
            }
            if let failure = scenario.failure {
                XCTFail("seed \(runSeed) (SYNC_PROPERTY_SEED=\(seed), run \(run)): \(failure)")
                break
            }
            completed += 1
        }
        XCTAssertGreaterThanOrEqual(completed, min(runs, 50), "too few runs finished within the time budget")
        print("sync property: \(completed) seeded runs from seed \(seed)")
    }
}

/// The server's library as it must be: each operation applied once, in arrival order.
private struct ServerModel {
    var favorites: Set<String> = []
    var collections: [String: String] = [:]
    var links: Set<String> = []
    var displayName: String?
    /// Each operation's first status, by operation id.
    var results: [String: Int] = [:]

    var library: SyncedLibrary {
        var library = SyncedLibrary(favorites: favorites, collections: [:], links: links, displayName: displayName)
        for (id, name) in collections {
            library.collections[id] = "\(name)#\(links.filter { $0.hasPrefix(id + "/") }.count)"
        }
        return library
    }

    /// Applies `operation` unless its id was seen; returns the status the server must answer.
    mutating func apply(_ operation: [String: Any], quotes: [String]) -> Int {
        let id = operation["id"] as! String
        if let first = results[id] { return first }
        let status = run(operation, quotes: quotes)
        results[id] = status
        return status
    }

    mutating func run(_ operation: [String: Any], quotes: [String]) -> Int {
        let quote = operation["quote_id"] as? String ?? ""
        let collection = operation["collection_id"] as? String ?? ""
        switch operation["op"] as! String {
        case "favorite.add":
            guard quotes.contains(quote) else { return 404 }
            return favorites.insert(quote).inserted ? 201 : 200
        case "favorite.remove":
            favorites.remove(quote)
            return 204
        case "collection.create":
            guard collections[collection] == nil else { return 409 }
            collections[collection] = operation["name"] as? String
            return 201
        case "collection.rename":
            guard collections[collection] != nil else { return 404 }
            collections[collection] = operation["name"] as? String
            return 200
        case "collection.delete":
            guard collections.removeValue(forKey: collection) != nil else { return 404 }
            links = links.filter { !$0.hasPrefix(collection + "/") }
            return 204
        case "collection.add_quote":
            guard collections[collection] != nil, quotes.contains(quote) else { return 404 }
            return links.insert("\(collection)/\(quote)").inserted ? 201 : 200
        case "collection.remove_quote":
            guard collections[collection] != nil else { return 404 }
            links.remove("\(collection)/\(quote)")
            return 204
        default:
            displayName = operation["display_name"] as? String
            return 200
        }
    }
}

/// One device: its synced copy, its token and its queue of offline operations.
private struct Device {
    var library = SyncedLibrary()
    var token: String?
    var queue: [[String: Any]] = []
    /// Collections it created offline and has not seen synced yet.
    var created: [String] = []
}

private struct Scenario {
    let app: TestApp
    let user: TestUser
    let quotes: [String]
    var generator: SplitMix64
    var model = ServerModel()
    var devices = [Device(), Device()]
    var failure: String?

    init(app: TestApp, user: TestUser, quotes: [String], generator: SplitMix64) {
        self.app = app
        self.user = user
        self.quotes = quotes
        self.generator = generator
    }

    private mutating func chance(_ percent: UInt64) -> Bool { generator.next() % 100 < percent }
    private mutating func pick<T>(_ items: [T]) -> T { items[Int(generator.next() % UInt64(items.count))] }

    mutating func play() throws {
        for index in devices.indices { try pull(index) }
        let steps = 6 + Int(generator.next() % 14)
        for _ in 0..<steps where failure == nil {
            let device = Int(generator.next() % 2)
            switch generator.next() % 10 {
            case 0..<5: devices[device].queue.append(makeOperation(device))
            case 5..<8:
                try push(device, loseAnswer: chance(25))
                try pull(device, loseAnswer: chance(15))
            default: try writeOnline(loseAnswer: chance(50))
            }
        }
        // Reconnect for good: every queue delivered, then both devices sync.
        for index in devices.indices { try push(index, loseAnswer: false) }
        for index in devices.indices { try pull(index) }
        let server = try SyncedLibrary.onServer(app.client, user)
        if failure == nil, server != model.library { failure = "server \(server) but expected \(model.library)" }
        for (index, device) in devices.enumerated() where failure == nil && device.library != server {
            failure = "device \(index) holds \(device.library) but the server \(server)"
        }
    }

    /// A random queued operation, mostly on things the device knows of (sometimes on things long gone).
    private mutating func makeOperation(_ device: Int) -> [String: Any] {
        let known = Array(devices[device].library.collections.keys).sorted() + devices[device].created
        let collection = known.isEmpty || chance(10) ? lower(UUID()) : pick(known)
        let quote = chance(5) ? lower(UUID()) : pick(quotes)
        var operation: [String: Any] = ["id": lower(UUID())]
        switch generator.next() % 8 {
        case 0: operation.merge(["op": "favorite.add", "quote_id": quote]) { $1 }
        case 1: operation.merge(["op": "favorite.remove", "quote_id": quote]) { $1 }
        case 2:
            let id = lower(UUID())
            devices[device].created.append(id)
            operation.merge(["op": "collection.create", "collection_id": id, "name": pick(["Work", "Fun", "Later"])]) {
                $1
            }
        case 3:
            operation.merge([
                "op": "collection.rename", "collection_id": collection, "name": pick(["Renamed", "Other"]),
            ]) { $1 }
        case 4: operation.merge(["op": "collection.delete", "collection_id": collection]) { $1 }
        case 5, 6:
            operation.merge(["op": "collection.add_quote", "collection_id": collection, "quote_id": quote]) { $1 }
        default:
            operation.merge(["op": "collection.remove_quote", "collection_id": collection, "quote_id": quote]) { $1 }
        }
        if chance(10) {
            operation = [
                "id": lower(UUID()), "op": "profile.update", "display_name": pick(["Ada", "Grace", "Edsger"]),
            ]
        }
        return operation
    }

    /// Sends the queue. The server applies it either way; a lost answer leaves the queue to be sent again.
    private mutating func push(_ device: Int, loseAnswer: Bool) throws {
        let queue = devices[device].queue
        guard !queue.isEmpty else { return }
        let expected = queue.map { model.apply($0, quotes: quotes) }
        let response = try app.client.push(user, queue)
        guard response.status == 200 else {
            failure = "push answered \(response.status): \(response.text)"
            return
        }
        let results = try response.jsonObject()["results"] as? [[String: Any]] ?? []
        let statuses = results.map { $0["status"] as? Int ?? -1 }
        if statuses != expected { failure = "push of \(queue) answered \(statuses), expected \(expected)" }
        if !loseAnswer {
            devices[device].queue = []
            devices[device].created = []
        }
    }

    /// Syncs from the device's token in pages of a random size; a lost answer leaves the device as it was.
    private mutating func pull(_ device: Int, loseAnswer: Bool = false) throws {
        var library = devices[device].library
        let limit = pick([1, 2, 5, 500])
        let token = try app.client.pull(user, since: devices[device].token, limit: limit, into: &library)
        if !loseAnswer {
            devices[device].library = library
            devices[device].token = token
        }
    }

    /// A write through a plain /v1 route with an Idempotency-Key; a lost answer is retried with the same key.
    private mutating func writeOnline(loseAnswer: Bool) throws {
        let key = lower(UUID())
        let headers = user.authorization.merging(["Idempotency-Key": key]) { $1 }
        let quote = pick(quotes)
        let request: (method: String, path: String, body: [String: Any]?)
        switch generator.next() % 3 {
        case 0: request = ("PUT", "/v1/favorites/\(quote)", nil)
        case 1: request = ("POST", "/v1/collections", ["name": "Online"])
        default: request = ("PATCH", "/v1/me", ["display_name": pick(["Online Ada", "Online Grace"])])
        }
        func send() throws -> HTTPTestResponse {
            if let body = request.body {
                return try app.client.send(request.method, request.path, json: body, headers: headers)
            }
            return try app.client.send(request.method, request.path, headers: headers)
        }
        let first = try send()
        switch request.method {
        case "PUT": _ = model.run(["op": "favorite.add", "quote_id": quote], quotes: quotes)
        case "POST":
            if let id = try first.jsonObject()["id"] as? String {
                _ = model.run(["op": "collection.create", "collection_id": id, "name": "Online"], quotes: quotes)
            }
        default:
            _ = model.run(
                ["op": "profile.update", "display_name": request.body?["display_name"] as Any], quotes: quotes)
        }
        guard loseAnswer else { return }
        let retry = try send()
        if retry.status != first.status || retry.body != first.body || retry.header("Idempotent-Replayed") != "true" {
            failure =
                "retry of \(request.method) \(request.path) answered \(retry.status) \(retry.text), "
                + "first \(first.status) \(first.text)"
        }
    }
}
