import Foundation
import TestSupport
import XCTest
import AuthJWT

/// Bounded fuzzing of `JWTSigner.verify`: it must never crash, and must never
/// accept anything but the exact token that was signed.
final class JWTFuzzTests: XCTestCase {
    let signer = JWTSigner(secret: Array("fuzzing secret, thirty-two bytes or more".utf8))
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    func validToken() throws -> String {
        try signer.sign(
            AccessTokenClaims(
                sub: "u", sid: "s", email: "e@example.com", iat: 1_700_000_000,
                exp: 1_700_003_600, role: "authenticated"))
    }

    func testRandomInputsNeverVerify() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        for round in 0..<2_000 {
            let length = Int.random(in: 0...400, using: &rng)
            let input: [UInt8]
            switch round % 3 {
            case 0:  // arbitrary bytes (invalid UTF-8 gets repaired by String)
                input = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:  // base64url characters and dots: reaches the decoders
                input = (0..<length).map { _ in
                    Int.random(in: 0..<16, using: &rng) == 0
                        ? UInt8(ascii: ".") : Self.alphabet.randomElement(using: &rng)!
                }
            default:  // three well-formed parts of random content: reaches JSON and HMAC
                input = Array(
                    [0, 1, 2].map { _ in
                        Base64URL.encode(
                            (0..<Int.random(in: 0...60, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                            })
                    }.joined(separator: ".").utf8)
            }
            let token = String(decoding: input, as: UTF8.self)
            XCTAssertThrowsError(try signer.verify(token, now: now), "seed \(seed) round \(round): \(token)")
        }
    }

    func testMutatedTokensNeverVerify() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let original = try validToken()
        XCTAssertNoThrow(try signer.verify(original, now: now))
        let pieces = Array(original.utf8)
        let symbols = Self.alphabet + Array(".=+/ \u{0}".utf8)
        var identical = 0
        var errors: [JWTError: Int] = [:]
        for round in 0..<2_000 {
            var bytes = pieces
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let position = Int.random(in: 0..<max(bytes.count, 1), using: &rng)
                switch Int.random(in: 0..<7, using: &rng) {
                case 0 where !bytes.isEmpty: bytes[position] = symbols.randomElement(using: &rng)!
                case 1 where !bytes.isEmpty: bytes[position] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                case 2: bytes.insert(symbols.randomElement(using: &rng)!, at: min(position, bytes.count))
                case 3 where !bytes.isEmpty: bytes.remove(at: position)
                case 4: bytes = Array(bytes.prefix(position))
                case 5 where bytes.count > 1:
                    let other = Int.random(in: 0..<bytes.count, using: &rng)
                    bytes.swapAt(position, other)
                default:
                    let end = min(bytes.count, position + Int.random(in: 1...20, using: &rng))
                    bytes.insert(contentsOf: bytes[min(position, end)..<end], at: min(position, bytes.count))
                }
            }
            let mutated = String(decoding: bytes, as: UTF8.self)
            if mutated == original {
                identical += 1
                continue
            }
            do {
                let claims = try signer.verify(mutated, now: now)
                XCTFail("seed \(seed) round \(round): accepted \(mutated) as \(claims)")
            } catch {
                errors[error, default: 0] += 1
            }
        }
        // The mutations must reach past the structural checks, or this test proves little.
        XCTAssertGreaterThan(errors[.badSignature, default: 0], 100, "seed \(seed): \(errors)")
        print("JWT mutation fuzz, seed \(seed): \(identical) identical, rejections \(errors)")
    }
}
