import XCTest
import AuthJWT

/// SHA-256, constant-time comparison and random bytes.
final class PrimitivesTests: XCTestCase {
    func testSHA256KnownAnswers() {
        XCTAssertEqual(Digest.sha256Hex([UInt8]()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(Digest.sha256Hex("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            Digest.sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(Digest.sha256([UInt8]()).count, 32)
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(ConstantTime.equals([], []))
        XCTAssertTrue(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2]))
        XCTAssertFalse(ConstantTime.equals([], [0]))
    }

    func testSecureRandomBytes() throws {
        XCTAssertEqual(try SecureRandom.bytes(count: 0), [])
        let a = try SecureRandom.bytes(count: 32), b = try SecureRandom.bytes(count: 32)
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(try SecureRandom.bytes(count: 100_000).count, 100_000)
    }

    func testOpenSSLErrorDescription() {
        XCTAssertEqual(OpenSSLError(operation: "RAND_bytes", details: []).description, "RAND_bytes failed")
        XCTAssertEqual(OpenSSLError(operation: "X", details: ["a", "b"]).description, "X failed: a; b")
    }
}
