import XCTest
import AuthJWT

final class OpaqueTokenTests: XCTestCase {
    func testShapeAndAlphabet() throws {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let token = try OpaqueToken.generate()
        XCTAssertEqual(token.count, 43)
        XCTAssertTrue(token.allSatisfy(allowed.contains), token)
        XCTAssertEqual(Base64URL.decode(token)?.count, 32)
        XCTAssertTrue(OpaqueToken.isWellFormed(token))
    }

    func testThousandTokensAreDistinct() throws {
        var seen = Set<String>()
        for _ in 0..<1_000 { seen.insert(try OpaqueToken.generate()) }
        XCTAssertEqual(seen.count, 1_000)
    }

    func testHashIsDeterministicHex() throws {
        let token = try OpaqueToken.generate()
        let hash = OpaqueToken.hash(token)
        XCTAssertEqual(hash, OpaqueToken.hash(token))
        XCTAssertEqual(hash.count, 64)
        XCTAssertTrue(hash.allSatisfy { "0123456789abcdef".contains($0) }, hash)
        XCTAssertNotEqual(hash, OpaqueToken.hash(try OpaqueToken.generate()))
        XCTAssertEqual(OpaqueToken.hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testWellFormedness() throws {
        let token = try OpaqueToken.generate()
        XCTAssertFalse(OpaqueToken.isWellFormed(""))
        XCTAssertFalse(OpaqueToken.isWellFormed(String(token.dropLast())))
        XCTAssertFalse(OpaqueToken.isWellFormed(token + "A"))
        XCTAssertFalse(OpaqueToken.isWellFormed(String(token.dropLast()) + "="))
        XCTAssertFalse(OpaqueToken.isWellFormed(String(repeating: "+", count: 43)))
    }
}
