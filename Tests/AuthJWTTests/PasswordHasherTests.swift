import TestSupport
import XCTest
@testable import AuthJWT

final class PasswordHasherTests: XCTestCase {
    /// Cheap parameters (1 MiB, ~2 ms) for behaviour tests; cost is tested separately.
    let fast = PasswordHasher(parameters: ScryptParameters(logN: 10, r: 8, p: 1))

    func testHashHasPHCShapeAndVerifies() throws {
        let phc = try fast.hash("correct horse battery staple")
        XCTAssertTrue(phc.hasPrefix("$scrypt$ln=10,r=8,p=1$"), phc)
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        XCTAssertEqual(fields.count, 5)
        XCTAssertEqual(fields[3].count, 22, "16-byte salt, unpadded base64")
        XCTAssertEqual(fields[4].count, 43, "32-byte hash, unpadded base64")
        XCTAssertFalse(fields[3].contains("=") || fields[4].contains("="), "no padding")
        XCTAssertTrue(try fast.verify("correct horse battery staple", against: phc))
    }

    func testDefaultParametersRoundTrip() throws {
        let hasher = PasswordHasher()
        let phc = try hasher.hash("pässwörd 🔑")
        XCTAssertTrue(phc.hasPrefix("$scrypt$\(ScryptParameters.default)$"), phc)
        XCTAssertTrue(try hasher.verify("pässwörd 🔑", against: phc))
        XCTAssertFalse(try hasher.verify("passwörd 🔑", against: phc))
        XCTAssertFalse(hasher.needsRehash(phc))
    }

    func testWrongPasswordIsFalse() throws {
        let phc = try fast.hash("hunter2")
        XCTAssertFalse(try fast.verify("hunter3", against: phc))
        XCTAssertFalse(try fast.verify("", against: phc))
        XCTAssertFalse(try fast.verify("hunter2 ", against: phc))
    }

    func testSamePasswordGetsDistinctSalts() throws {
        let first = try fast.hash("same"), second = try fast.hash("same")
        XCTAssertNotEqual(first, second)
        XCTAssertTrue(try fast.verify("same", against: second))
    }

    /// A PHC string built from RFC 7914's third vector verifies: our parser and
    /// base64 agree with the published scrypt output.
    func testKnownAnswerPHC() throws {
        let salt = UnpaddedBase64.standard.encode(Array("SodiumChloride".utf8))
        let hash = UnpaddedBase64.standard.encode(
            bytes(
                hex: """
                    7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2
                    d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887
                    """))
        let phc = "$scrypt$ln=14,r=8,p=1$\(salt)$\(hash)"
        XCTAssertTrue(try fast.verify("pleaseletmein", against: phc))
        XCTAssertFalse(try fast.verify("pleaseletmeout", against: phc))
    }

    func testMalformedPHCThrows() throws {
        let good = try fast.hash("x")
        let fields = good.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        let salt = fields[3], hash = fields[4]
        let malformed = [
            "", "$", "scrypt", "$scrypt$", "$scrypt$ln=10,r=8,p=1$\(salt)",
            "$scrypt$ln=10,r=8,p=1$\(salt)$\(hash)$",
            "scrypt$ln=10,r=8,p=1$\(salt)$\(hash)",
            "$argon2id$ln=10,r=8,p=1$\(salt)$\(hash)",
            "$SCRYPT$ln=10,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$r=8,ln=10,p=1$\(salt)$\(hash)",
            "$scrypt$ln=10,r=8$\(salt)$\(hash)",
            "$scrypt$ln=10,r=8,p=1,x=1$\(salt)$\(hash)",
            "$scrypt$ln=010,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=+10,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=-1,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=99999999999999999999,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=10,r=8,p=1$\(salt)==$\(hash)",
            "$scrypt$ln=10,r=8,p=1$\(salt)$\(hash)=",
            "$scrypt$ln=10,r=8,p=1$\(salt)$\(hash.replacingOccurrences(of: hash.prefix(1), with: "-"))",
            "$scrypt$ln=10,r=8,p=1$\(salt) $\(hash)",
            "$scrypt$ln=10,r=8,p=1$\(salt)$" + hash.dropLast(2),  // 41 chars: a lone 6-bit group
            String(repeating: "A", count: 100_000),
        ]
        for phc in malformed {
            XCTAssertThrowsError(try fast.verify("x", against: phc), "accepted \(phc.prefix(80))") { error in
                XCTAssertEqual(error as? PasswordHashError, .malformedHash, "\(phc.prefix(80))")
            }
        }
    }

    /// A tampered row cannot make us allocate gigabytes or spin for minutes.
    func testAbsurdStoredParametersThrowBeforeComputing() throws {
        let good = try fast.hash("x")
        let fields = good.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        let salt = fields[3], hash = fields[4]
        let absurd = [
            "ln=0,r=8,p=1", "ln=25,r=8,p=1", "ln=20,r=8,p=1", "ln=30,r=1,p=1", "ln=10,r=0,p=1",
            "ln=10,r=9999,p=1", "ln=10,r=8,p=0", "ln=10,r=8,p=9999", "ln=18,r=8,p=4", "ln=16,r=64,p=1",
        ]
        for params in absurd {
            let phc = "$scrypt$\(params)$\(salt)$\(hash)"
            XCTAssertThrowsError(try fast.verify("x", against: phc), params) { error in
                XCTAssertEqual(error as? PasswordHashError, .unsupportedParameters, params)
            }
        }
        let shortSalt = UnpaddedBase64.standard.encode([UInt8](repeating: 1, count: 4))
        let longHash = UnpaddedBase64.standard.encode([UInt8](repeating: 1, count: 65))
        for phc in ["$scrypt$ln=10,r=8,p=1$\(shortSalt)$\(hash)", "$scrypt$ln=10,r=8,p=1$\(salt)$\(longHash)"] {
            XCTAssertThrowsError(try fast.verify("x", against: phc)) { error in
                XCTAssertEqual(error as? PasswordHashError, .unsupportedParameters)
            }
        }
    }

    func testNeedsRehashWhenStoredParametersAreWeaker() throws {
        let configured = PasswordHasher(parameters: ScryptParameters(logN: 11, r: 8, p: 2))
        let current = try configured.hash("pw")
        XCTAssertFalse(configured.needsRehash(current))
        for weaker in [
            ScryptParameters(logN: 10, r: 8, p: 2), ScryptParameters(logN: 11, r: 4, p: 2),
            ScryptParameters(logN: 11, r: 8, p: 1), ScryptParameters(logN: 10, r: 8, p: 4),
        ] {
            let old = try PasswordHasher(parameters: weaker).hash("pw")
            XCTAssertTrue(configured.needsRehash(old), "\(weaker)")
            XCTAssertTrue(try configured.verify("pw", against: old), "old hashes still verify")
        }
        for notWeaker in [
            ScryptParameters(logN: 12, r: 8, p: 2), ScryptParameters(logN: 12, r: 4, p: 2),
            ScryptParameters(logN: 10, r: 16, p: 2), ScryptParameters(logN: 11, r: 16, p: 1),
        ] {
            let stored = try PasswordHasher(parameters: notWeaker).hash("pw")
            XCTAssertFalse(configured.needsRehash(stored), "\(notWeaker): same or more memory and work")
        }
        XCTAssertTrue(configured.needsRehash("not a hash"))
    }

    func testHashDummyRunsWithoutAStoredHash() {
        fast.hashDummy("anything")
        fast.hashDummy("")
    }

    /// Mutations of a stored hash never crash and never verify, with one
    /// mathematically expected exception: scrypt output is a PBKDF2 stream, so a
    /// hash cut short (still canonical base64) is a prefix of the real one.
    func testFuzzedPHCStringsNeverCrashOrVerify() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var rng = SplitMix64(seed: seed)
        let password = "fuzz me"
        let original = try fast.hash(password)
        let stored = try PHCString(parsing: original)
        // No digits: a mutation must not be able to raise the cost parameters.
        let symbols = Array("$=,+/-_.ABCxyz \u{0}é".unicodeScalars)
        for _ in 0..<300 {
            var scalars = Array(original.unicodeScalars)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let position = Int.random(in: 0..<max(scalars.count, 1), using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where !scalars.isEmpty: scalars[position] = symbols.randomElement(using: &rng)!
                case 1: scalars.insert(symbols.randomElement(using: &rng)!, at: min(position, scalars.count))
                default: if !scalars.isEmpty { scalars.remove(at: position) }
                }
            }
            var mutated = ""
            mutated.unicodeScalars.append(contentsOf: scalars)
            guard mutated != original else { continue }
            if let accepted = try? fast.verify(password, against: mutated), accepted {
                let parsed = try PHCString(parsing: mutated)
                XCTAssertEqual(parsed.parameters, stored.parameters, "seed \(seed), from \(original): \(mutated)")
                XCTAssertEqual(parsed.salt, stored.salt, "seed \(seed), from \(original): \(mutated)")
                XCTAssertEqual(
                    Array(stored.hash.prefix(parsed.hash.count)), parsed.hash,
                    "seed \(seed), from \(original): \(mutated)")
            }
        }
    }
}
