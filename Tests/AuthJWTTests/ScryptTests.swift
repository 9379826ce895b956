import XCTest
@testable import AuthJWT

/// RFC 7914 §12 test vectors through the low-level scrypt call. (The fourth
/// vector, N=2^20, needs 1 GiB and is left out.)
final class ScryptTests: XCTestCase {
    func testRFC7914EmptyPasswordN16() throws {
        let key = try Scrypt.deriveKey(password: [], salt: [], n: 16, r: 1, p: 1, length: 64)
        XCTAssertEqual(
            key,
            bytes(
                hex: """
                    77 d6 57 62 38 65 7b 20 3b 19 ca 42 c1 8a 04 97 f1 6b 48 44 e3 07 4a e8 df df fa 3f ed e2 14 42
                    fc d0 06 9d ed 09 48 f8 32 6a 75 3a 0f c8 1f 17 e8 d3 e0 fb 2e 0d 36 28 cf 35 e2 0c 38 d1 89 06
                    """))
    }

    func testRFC7914PasswordNaClN1024() throws {
        let key = try Scrypt.deriveKey(
            password: Array("password".utf8), salt: Array("NaCl".utf8),
            n: 1024, r: 8, p: 16, length: 64)
        XCTAssertEqual(
            key,
            bytes(
                hex: """
                    fd ba be 1c 9d 34 72 00 78 56 e7 19 0d 01 e9 fe 7c 6a d7 cb c8 23 78 30 e7 73 76 63 4b 37 31 62
                    2e af 30 d9 2e 22 a3 88 6f f1 09 27 9d 98 30 da c7 27 af b9 4a 83 ee 6d 83 60 cb df a2 cc 06 40
                    """))
    }

    func testRFC7914PleaseLetMeInN16384() throws {
        let key = try Scrypt.deriveKey(
            password: Array("pleaseletmein".utf8), salt: Array("SodiumChloride".utf8),
            n: 16384, r: 8, p: 1, length: 64)
        XCTAssertEqual(
            key,
            bytes(
                hex: """
                    70 23 bd cb 3a fd 73 48 46 1c 06 cd 81 fd 38 eb fd a8 fb ba 90 4f 8e 3e a9 b5 43 f6 54 5d a1 f2
                    d5 43 29 55 61 3f 0f cf 62 d4 97 05 24 2a 9a f9 e6 1e 85 dc 0d 65 1e 40 df cf 01 7b 45 57 58 87
                    """))
    }

    /// N=2^15, r=8 needs 32 MiB + a little: more than OpenSSL's default limit,
    /// which is why an explicit maxmem is computed.
    func testExplicitMemoryLimitAllowsDefaultSizedCosts() throws {
        XCTAssertGreaterThan(Scrypt.memoryLimit(n: 1 << 15, r: 8, p: 1), 32 << 20)
        let key = try Scrypt.deriveKey(
            password: Array("pw".utf8), salt: Array("saltsalt".utf8),
            n: 1 << 15, r: 8, p: 1, length: 32)
        XCTAssertEqual(key.count, 32)
    }

    func testOpenSSLFailureIsThrownWithItsQueue() {
        // p·r at scrypt's 2^30 limit: OpenSSL refuses before allocating, and we throw.
        XCTAssertThrowsError(
            try Scrypt.deriveKey(
                password: [1], salt: [2], n: 16, r: 1, p: 1 << 30,
                length: 32)
        ) { error in
            guard let error = error as? OpenSSLError else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(error.operation, "EVP_PBE_scrypt")
        }
    }
}
