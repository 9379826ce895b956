import Foundation
import HTTPServer
import QuoteVault

/// Offset pages of quotes as sent (JSON, its gzip form and ETag), for one version of the quotes
/// (`QuoteService.version()`): a page asked again while no quote changed costs one small read instead of the
/// page's query, and its answer is not written or compressed again. Bounded in bytes; when full it starts over
/// (hot pages come back at once).
final class QuotePageCache: @unchecked Sendable {
    // @unchecked: `entries` and `bytes` are guarded by `lock`.
    struct Key: Hashable {
        let category: QuoteCategory?
        let page: Int
        let size: Int
    }

    private let lock = NSLock()
    private var entries: [Key: (version: Int64, body: PreparedBody)] = [:]
    private var bytes = 0
    let capacityInBytes: Int

    init(capacityInBytes: Int = 4 << 20) { self.capacityInBytes = capacityInBytes }

    /// The page's answer if it was made at `version`.
    subscript(key: Key, version: Int64) -> PreparedBody? {
        lock.withLock {
            guard let entry = entries[key], entry.version == version else { return nil }
            return entry.body
        }
    }

    func store(_ body: PreparedBody, for key: Key, version: Int64) {
        lock.withLock {
            if let old = entries[key] {
                guard old.version <= version else { return }
                bytes -= old.body.size
            }
            if bytes + body.size > capacityInBytes {
                entries.removeAll(keepingCapacity: true)
                bytes = 0
            }
            entries[key] = (version, body)
            bytes += body.size
        }
    }
}
