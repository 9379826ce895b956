import Foundation
import XCTest
import AuthJWT
import Synchronization

/// RFC 4231 §4 test cases for HMAC-SHA-256 (case 5, a truncated tag, does not apply).
final class HMACSHA256Tests: XCTestCase {
    private func check(
        key: [UInt8], data: [UInt8], expected: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        let tag = HMACSHA256.authenticationCode(for: data, key: key)
        XCTAssertEqual(tag.count, HMACSHA256.byteCount, file: file, line: line)
        XCTAssertEqual(hexString(tag), expected, file: file, line: line)
        // A prepared key gives the same tag, every time it is used.
        let prepared = HMACSHA256.Key(key)
        for _ in 0..<2 {
            XCTAssertEqual(
                hexString(prepared.authenticationCode(for: data)), expected, "prepared key", file: file, line: line)
        }
    }

    func testCase1() {
        check(
            key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            expected: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    func testCase2KeyShorterThanOutput() {
        check(
            key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            expected: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testCase3() {
        check(
            key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
            expected: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
    }

    func testCase4() {
        check(
            key: Array(1...25), data: [UInt8](repeating: 0xcd, count: 50),
            expected: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
    }

    func testCase6KeyLargerThanBlock() {
        check(
            key: [UInt8](repeating: 0xaa, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            expected: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testCase7KeyAndDataLargerThanBlock() {
        let data =
            "This is a test using a larger than block-size key and a larger than block-size data."
            + " The key needs to be hashed before being used by the HMAC algorithm."
        check(
            key: [UInt8](repeating: 0xaa, count: 131), data: Array(data.utf8),
            expected: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    func testAcceptsNonArrayCollections() {
        let tag = HMACSHA256.authenticationCode(for: "Hi There".utf8, key: repeatElement(UInt8(0x0b), count: 20))
        XCTAssertEqual(hexString(tag), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    func testAPreparedKeyServesManyThreadsAtOnce() {
        let key = HMACSHA256.Key(Array("a key shared by every request".utf8))
        let messages = (0..<64).map { Array("message \($0)".utf8) }
        let expected = messages.map {
            HMACSHA256.authenticationCode(for: $0, key: Array("a key shared by every request".utf8))
        }
        let mismatches = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<200 {
                let index = (worker * 31 + round) % messages.count
                if key.authenticationCode(for: messages[index]) != expected[index] { mismatches.increment() }
            }
        }
        XCTAssertEqual(mismatches.value, 0)
    }

    func testAPreparedKeyTagsTheEmptyMessage() {
        // RFC 4231 has no empty message; this is HMAC-SHA-256 of "" under "key" as every implementation gives it.
        XCTAssertEqual(
            hexString(HMACSHA256.Key(Array("key".utf8)).authenticationCode(for: [UInt8]())),
            "5d5d139563c95b5967b9bd9a8c9b233a9dedb45072794cd232dc1b74832607d0")
    }
}

private final class LockedCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
