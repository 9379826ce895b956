import AuthJWT
import Foundation
import XCTest

/// TOTP against RFC 6238's published vectors (SHA-1, key "12345678901234567890"), and base32 against RFC 4648's.
final class TOTPTests: XCTestCase {
    func testRFC6238Vectors() {
        let totp = TOTP(secret: Array("12345678901234567890".utf8))
        // RFC 6238 appendix B gives 8 digits; the 6-digit code is their last six.
        let vectors: [(Int64, String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for (time, expected) in vectors {
            let date = Date(timeIntervalSince1970: TimeInterval(time))
            XCTAssertEqual(totp.code(step: TOTP.step(at: date)), String(expected.suffix(6)), "T=\(time)")
            XCTAssertEqual(totp.matchingStep(String(expected.suffix(6)), at: date), TOTP.step(at: date))
        }
        let date = Date(timeIntervalSince1970: 59)
        XCTAssertNil(totp.matchingStep("123456", at: date))
        XCTAssertNil(totp.matchingStep("28708", at: date), "too short")
        XCTAssertNil(totp.matchingStep("２８７０８２", at: date), "ASCII digits only")
    }

    func testHMACSHA1RFC2202Vector() {
        let tag = HMACSHA1.authenticationCode(for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        XCTAssertEqual(tag.map { String(format: "%02x", $0) }.joined(), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }

    func testBase32RFC4648Vectors() {
        let vectors = [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"),
            ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI"),
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base32.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base32.decode(encoded), Array(plain.utf8))
            XCTAssertEqual(Base32.decode(encoded.lowercased() + "=="), Array(plain.utf8))
        }
        XCTAssertNil(Base32.decode("MZ1W"), "1 is not in the alphabet")
    }
}
