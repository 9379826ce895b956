import Foundation
import HTTPServer
import QuoteVault
import Synchronization

/// Public answers as sent (JSON, its gzip form and ETag), each for one version of the quotes
/// (`QuoteService.version()`): an answer asked again while no quote changed costs one small read instead of its
/// query, and is not written or compressed again. Used for offset pages and search pages. Bounded in bytes; when
/// full it starts over (hot answers come back at once; a flood of distinct keys can only make it useless, never
/// large).
final class VersionedAnswerCache<Key: Hashable & Sendable>: Sendable {
    private let state = Mutex<(entries: [Key: (version: Int64, body: PreparedBody)], bytes: Int, newest: Int64)>(
        ([:], 0, .min))
    let capacityInBytes: Int
    /// Memory a key holds beyond the body (its own bytes and the table's overhead), for the bound.
    private let keyCost: @Sendable (Key) -> Int

    /// - Parameter capacityInBytes: 0 turns the cache off.
    init(capacityInBytes: Int = 4 << 20, keyCost: @escaping @Sendable (Key) -> Int = { _ in 64 }) {
        self.capacityInBytes = capacityInBytes
        self.keyCost = keyCost
    }

    /// False when configured with no room: callers then skip reading the version.
    var isEnabled: Bool { capacityInBytes > 0 }

    /// The answer if it was made at `version`.
    subscript(key: Key, version: Int64) -> PreparedBody? {
        state.withLock { state in
            state.newest = max(state.newest, version)
            guard let entry = state.entries[key], entry.version == version else { return nil }
            return entry.body
        }
    }

    /// Whether an answer for `key` is filed at the newest version asked about, without reading the version: a guess
    /// (a quote may have changed since), good enough to decide what a request will likely cost.
    func holdsLatest(_ key: Key) -> Bool {
        state.withLock { state in state.entries[key].map { $0.version == state.newest } ?? false }
    }

    /// Files `body`, made from quotes read at `version` (read before the answer's query: an answer made after a
    /// change is then at worst filed under the older version, where no later request finds it).
    func store(_ body: PreparedBody, for key: Key, version: Int64) {
        let cost = body.size + keyCost(key)
        guard cost <= capacityInBytes else { return }
        state.withLock { state in
            state.newest = max(state.newest, version)
            if let old = state.entries[key] {
                guard old.version <= version else { return }
                state.bytes -= old.body.size + keyCost(key)
                state.entries[key] = nil
            }
            if state.bytes + cost > capacityInBytes {
                state.entries.removeAll(keepingCapacity: true)
                state.bytes = 0
            }
            state.entries[key] = (version, body)
            state.bytes += cost
        }
    }
}

extension VersionedAnswerCache {
    /// The stage that answers from this cache: a request `key` files (nil: not cached, e.g. a cursor page) gets the
    /// answer made at the quotes' current `version`, else the handler's (a 200 JSON answer; a failure is thrown),
    /// filed. The version is read first: an answer made after a change is then at worst filed under the older
    /// version, where no later request finds it. Without a key (or with caches off) the answer is only tagged.
    func stage(
        _ name: String, key: @escaping @Sendable (Request) throws -> Key?,
        version: @escaping @Sendable () async throws -> Int64
    ) -> Stage {
        Stage(name) { request, _, next in
            guard self.isEnabled, let key = try key(request) else { return try await next(request).taggedWithETag() }
            let version = try await version()
            if let cached = self[key, version] { return .json(prepared: cached) }
            let body = PreparedBody(try await next(request).body)
            self.store(body, for: key, version: version)
            return .json(prepared: body)
        }
    }
}
