import Foundation
import TestSupport
import XCTest
import AuthJWT

final class Base64URLTests: XCTestCase {
    /// RFC 4648 §10 vectors with the padding removed.
    func testRFC4648Vectors() {
        let vectors = [
            "": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8))
        }
    }

    func testURLAlphabet() {
        XCTAssertEqual(Base64URL.encode([0xfb, 0xff, 0xbf]), "-_-_")
        XCTAssertEqual(Base64URL.decode("-_-_"), [0xfb, 0xff, 0xbf])
    }

    func testRejectsNonCanonicalInput() {
        for text in [
            "Zg==", "Zm8=", "+/+/", "Zm9v\n", " Zm9v", "Z", "Zm9vY", "Zh", "Zm9", "Zm9vYmF", "Zm.v", "Zm9vé",
        ] {
            XCTAssertNil(Base64URL.decode(text), text)
        }
        // "Zh" and "Zm9" differ from "Zg"/"Zm8" only in bits the decoder drops:
        // accepting them would make two strings decode to one value.
    }

    func testRandomRoundTrips() {
        var rng = SplitMix64(seed: 42)
        for length in 0..<200 {
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let encoded = Base64URL.encode(data)
            XCTAssertFalse(encoded.contains { "+/=".contains($0) })
            XCTAssertEqual(
                encoded,
                Data(data).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: ""))
            XCTAssertEqual(Base64URL.decode(encoded), data)
        }
    }
}
