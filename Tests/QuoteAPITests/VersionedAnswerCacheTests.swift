import HTTPServer
@testable import QuoteAPI
import XCTest

/// The answer cache behind offset pages and search pages: per version of the quotes, bounded in bytes.
final class VersionedAnswerCacheTests: XCTestCase {
    private func body(_ count: Int) -> PreparedBody {
        PreparedBody([UInt8](repeating: UInt8(ascii: " "), count: count))
    }

    func testAnAnswerHoldsOnlyForTheVersionItWasMadeAt() {
        let cache = VersionedAnswerCache<String>(capacityInBytes: 1 << 20)
        cache.store(body(10), for: "a", version: 7)
        XCTAssertEqual(cache["a", 7]?.bytes.count, 10)
        XCTAssertNil(cache["a", 8])
        XCTAssertNil(cache["b", 7])
        // An answer made at an older version never replaces a newer one.
        cache.store(body(20), for: "a", version: 6)
        XCTAssertEqual(cache["a", 7]?.bytes.count, 10)
        cache.store(body(30), for: "a", version: 8)
        XCTAssertEqual(cache["a", 8]?.bytes.count, 30)
    }

    func testItNeverHoldsMoreThanItsBoundAndZeroTurnsItOff() {
        // Each entry costs its body (100 bytes, too small to be gzipped), its ETag (18) and its key (64).
        let perEntry = 100 + 18 + 64
        let cache = VersionedAnswerCache<Int>(capacityInBytes: 3 * perEntry)
        for key in 0..<3 { cache.store(body(100), for: key, version: 1) }
        XCTAssertTrue((0..<3).allSatisfy { cache[$0, 1] != nil }, "three entries fit exactly")
        cache.store(body(100), for: 3, version: 1)
        XCTAssertNotNil(cache[3, 1])
        XCTAssertTrue((0..<3).allSatisfy { cache[$0, 1] == nil }, "one past the bound: it started over")
        // Replacing an entry does not count it twice.
        for _ in 0..<10 { cache.store(body(100), for: 3, version: 1) }
        for key in 4..<6 { cache.store(body(100), for: key, version: 1) }
        XCTAssertTrue([3, 4, 5].allSatisfy { cache[$0, 1] != nil })

        let tooLarge = VersionedAnswerCache<Int>(capacityInBytes: perEntry - 1)
        tooLarge.store(body(100), for: 0, version: 1)
        XCTAssertNil(tooLarge[0, 1], "an answer larger than the whole cache is not kept")
        let off = VersionedAnswerCache<Int>(capacityInBytes: 0)
        off.store(body(1), for: 0, version: 1)
        XCTAssertNil(off[0, 1])
    }
}
