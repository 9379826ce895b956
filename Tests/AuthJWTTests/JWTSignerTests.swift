import Foundation
import XCTest
import AuthJWT

final class JWTSignerTests: XCTestCase {
    static let secret = Array("an HS256 test secret of at least 32 bytes".utf8)
    let signer = JWTSigner(secret: JWTSignerTests.secret)
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    var nowSeconds: Int { Int(now.timeIntervalSince1970) }

    func claims(iat: Int? = nil, exp: Int? = nil, aud: JWTAudience = "authenticated", nbf: Int? = nil)
        -> AccessTokenClaims
    {
        AccessTokenClaims(
            sub: "7c9e6679-7425-40de-944b-e07fc1f90ae7", sid: "session-1", email: "reader@example.com",
            iat: iat ?? nowSeconds, exp: exp ?? nowSeconds + 3600, aud: aud, role: "authenticated",
            nbf: nbf)
    }

    /// A token with exactly this header and payload JSON, correctly HS256-signed
    /// with the test secret — so a rejection can only be due to the part under test.
    func craft(header: String, payload: String, secret: [UInt8] = JWTSignerTests.secret) -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(HMACSHA256.authenticationCode(for: input.utf8, key: secret))
    }

    var validPayload: String {
        #"{"sub":"u1","sid":"s1","iat":\#(nowSeconds),"exp":\#(nowSeconds + 60),"#
            + #""aud":"authenticated","role":"authenticated"}"#
    }

    func assertRejects(
        _ token: String, audience: String = "authenticated", with expected: JWTError,
        _ message: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try signer.verify(token, audience: audience, now: now), message, file: file, line: line) {
            error in
            XCTAssertEqual(error as? JWTError, expected, "\(message) \(token.prefix(120))", file: file, line: line)
        }
    }

    // MARK: Round trip

    func testSignVerifyRoundTrip() throws {
        let original = claims()
        let token = try signer.sign(original)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        XCTAssertEqual(
            Base64URL.decode(parts[0]).map { String(decoding: $0, as: UTF8.self) }, #"{"alg":"HS256","typ":"JWT"}"#)
        XCTAssertEqual(try signer.verify(token, now: now), original)
    }

    func testOptionalClaimsRoundTripAndAreOmittedWhenNil() throws {
        var full = claims()
        full.email = nil
        full.iss = "quotevault"
        full.aal = "aal1"
        full.sessionID = "session-1"
        full.isAnonymous = false
        full.appMetadata = ["provider": .string("email"), "providers": .array([.string("email")])]
        full.userMetadata = [
            "n": .number(1.5), "ok": .bool(true), "none": .null, "nested": .object(["a": .string("b/c")]),
        ]
        let token = try signer.sign(full)
        XCTAssertEqual(try signer.verify(token, now: now), full)

        let payload = try XCTUnwrap(Base64URL.decode(token.split(separator: ".")[1]))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        XCTAssertEqual(
            Set(json.keys),
            [
                "sub", "sid", "iat", "exp", "aud", "role", "iss", "aal", "session_id",
                "is_anonymous", "app_metadata", "user_metadata",
            ])
        let minimal = try XCTUnwrap(Base64URL.decode(try signer.sign(claims()).split(separator: ".")[1]))
        let minimalJSON = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(minimal)) as? [String: Any])
        XCTAssertEqual(Set(minimalJSON.keys), ["sub", "sid", "email", "iat", "exp", "aud", "role"])
    }

    func testUnknownClaimsAreIgnoredAndTypIsOptional() throws {
        let payload =
            #"{"sub":"u1","sid":"s1","iat":\#(nowSeconds),"exp":\#(nowSeconds + 60),"#
            + #""aud":"authenticated","role":"authenticated","future_claim":{"x":[1,2]}}"#
        let verified = try signer.verify(craft(header: #"{"alg":"HS256"}"#, payload: payload), now: now)
        XCTAssertEqual(verified.sub, "u1")
        XCTAssertNil(verified.email)
    }

    func testSigningIsDeterministicAndKeyed() throws {
        XCTAssertEqual(try signer.sign(claims()), try signer.sign(claims()))
        let other = JWTSigner(secret: [UInt8](repeating: 7, count: 32))
        XCTAssertNotEqual(try signer.sign(claims()), try other.sign(claims()))
    }

    func testSecretDoesNotLeakIntoDescriptions() {
        var dumped = ""
        dump(signer, to: &dumped)
        for text in ["\(signer)", String(reflecting: signer), dumped] {
            XCTAssertFalse(text.contains("HS256 test secret"), text)
            XCTAssertFalse(text.contains("97, 110"), text)  // "an" as bytes
        }
    }

    func testSignRefusesTokensVerifyWouldRefuse() {
        var huge = claims()
        huge.userMetadata = ["blob": .string(String(repeating: "x", count: 10_000))]
        XCTAssertThrowsError(try signer.sign(huge)) { XCTAssertEqual($0 as? JWTError, .tooLarge) }
    }

    // MARK: Algorithm and header

    func testRejectsAlgNoneWithEmptySignature() {
        for header in [#"{"alg":"none"}"#, #"{"alg":"none","typ":"JWT"}"#, #"{"alg":"None"}"#, #"{"alg":"NONE"}"#] {
            let token = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(validPayload.utf8)) + "."
            assertRejects(token, with: .unsupportedAlgorithm, header)
        }
    }

    func testRejectsOtherAlgorithmsEvenWithAValidHS256Signature() {
        for header in [
            #"{"alg":"HS512","typ":"JWT"}"#, #"{"alg":"RS256","typ":"JWT"}"#, #"{"alg":"ES256"}"#,
            #"{"alg":"hs256"}"#, #"{"alg":"HS256 "}"#, #"{"typ":"JWT"}"#, #"{}"#, #"{"alg":null}"#,
        ] {
            assertRejects(craft(header: header, payload: validPayload), with: .unsupportedAlgorithm, header)
        }
    }

    func testRejectsUnsupportedHeaderFields() {
        for header in [
            #"{"alg":"HS256","typ":"at+jwt"}"#, #"{"alg":"HS256","typ":"jwt"}"#,
            #"{"alg":"HS256","crit":["exp"]}"#,
        ] {
            assertRejects(craft(header: header, payload: validPayload), with: .unsupportedHeader, header)
        }
    }

    func testRejectsWrongHeaderTypes() {
        for header in [#"{"alg":256}"#, #"{"alg":["HS256"]}"#, #"{"alg":"HS256","typ":1}"#, #"["HS256"]"#, #""HS256""#]
        {
            assertRejects(craft(header: header, payload: validPayload), with: .malformed, header)
        }
    }

    // MARK: Signature

    func testRejectsFlippedSignatureCharacter() throws {
        let token = try signer.sign(claims())
        var chars = Array(token)
        let index = chars.count - 10
        chars[index] = chars[index] == "A" ? "B" : "A"
        assertRejects(String(chars), with: .badSignature)
    }

    func testRejectsTamperedPayloadWithOriginalSignature() throws {
        let token = try signer.sign(claims())
        let parts = token.split(separator: ".").map(String.init)
        var tampered = claims()
        tampered.role = "service_role"
        let forgedPayload = try XCTUnwrap(try signer.sign(tampered).split(separator: ".").map(String.init)[1])
        assertRejects([parts[0], forgedPayload, parts[2]].joined(separator: "."), with: .badSignature)
    }

    func testRejectsOtherSecretsAndShortenedSignatures() throws {
        let foreign = craft(
            header: #"{"alg":"HS256","typ":"JWT"}"#, payload: validPayload,
            secret: [UInt8](repeating: 1, count: 32))
        assertRejects(foreign, with: .badSignature)
        let token = try signer.sign(claims())
        assertRejects(String(token.dropLast(3)), with: .badSignature, "30-byte signature")
        assertRejects(
            String(token.prefix(while: { $0 != "." })) + "." + token.split(separator: ".")[1] + ".",
            with: .badSignature, "empty signature")
    }

    /// The last of 43 characters carries 2 unused bits; changing only those must
    /// not yield a second valid spelling of the same signature.
    func testRejectsNonCanonicalSignatureSpelling() throws {
        let token = try signer.sign(claims())
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try XCTUnwrap(alphabet.firstIndex(of: token.last!))
        XCTAssertEqual(last % 4, 0, "canonical: low 2 bits clear")
        for delta in 1...3 {
            assertRejects(String(token.dropLast()) + String(alphabet[last + delta]), with: .malformed, "delta \(delta)")
        }
    }

    // MARK: Claims

    func testAudience() throws {
        assertRejects(try signer.sign(claims(aud: "anon")), with: .wrongAudience)
        assertRejects(try signer.sign(claims()), audience: "service", with: .wrongAudience)
        assertRejects(try signer.sign(claims(aud: JWTAudience(["a", "b"]))), with: .wrongAudience)
        assertRejects(try signer.sign(claims(aud: JWTAudience([]))), with: .wrongAudience)
        let multi = claims(aud: JWTAudience(["other", "authenticated"]))
        XCTAssertEqual(try signer.verify(try signer.sign(multi), now: now).aud.values, ["other", "authenticated"])
        XCTAssertEqual(try signer.verify(try signer.sign(claims(aud: "svc")), audience: "svc", now: now).aud, "svc")
    }

    func testExpiry() throws {
        assertRejects(try signer.sign(claims(exp: nowSeconds - 1)), with: .expired)
        assertRejects(try signer.sign(claims(exp: nowSeconds)), with: .expired, "exp is exclusive, no leeway")
        XCTAssertNoThrow(try signer.verify(try signer.sign(claims(exp: nowSeconds + 1)), now: now))
        let token = try signer.sign(claims())
        XCTAssertNoThrow(try signer.verify(token, now: now.addingTimeInterval(3599)))
        XCTAssertThrowsError(try signer.verify(token, now: now.addingTimeInterval(3600))) {
            XCTAssertEqual($0 as? JWTError, .expired)
        }
    }

    func testNotBefore() throws {
        assertRejects(try signer.sign(claims(nbf: nowSeconds + 3600)), with: .notYetValid)
        assertRejects(try signer.sign(claims(nbf: nowSeconds + 61)), with: .notYetValid)
        XCTAssertNoThrow(try signer.verify(try signer.sign(claims(nbf: nowSeconds + 30)), now: now), "within skew")
        XCTAssertNoThrow(try signer.verify(try signer.sign(claims(nbf: nowSeconds - 30)), now: now))
    }

    func testIssuedInFuture() throws {
        assertRejects(try signer.sign(claims(iat: nowSeconds + 3600, exp: nowSeconds + 7200)), with: .issuedInFuture)
        XCTAssertNoThrow(try signer.verify(try signer.sign(claims(iat: nowSeconds + 60)), now: now), "within skew")
    }

    // MARK: Malformed input

    func testMalformedStructure() throws {
        let token = try signer.sign(claims())
        let parts = token.split(separator: ".").map(String.init)
        let cases: [(String, String)] = [
            ("", "empty"), (".", "one dot"), ("..", "two dots only"), ("a.b", "two parts"),
            (parts[0] + "." + parts[1], "two real parts"),
            ("a.b.c.d", "four parts"), (token + ".", "trailing dot"), (token + "." + parts[2], "four real parts"),
            ("!!!.???.***", "non-base64"), ("*" + token.dropFirst(), "non-base64 header"),
            (parts[0] + "=." + parts[1] + "." + parts[2], "padded header"),
            (parts[0] + "." + parts[1] + "." + parts[2] + "=", "padded signature"),
            (parts[0] + "." + parts[1] + "." + parts[2].dropLast() + "+", "standard alphabet"),
            (" " + token, "leading space"), (token + "\n", "trailing newline"),
            ("Bearer " + token, "scheme prefix"),
        ]
        for (input, label) in cases {
            assertRejects(input, with: .malformed, label)
        }
    }

    func testHugeInputsAreRefusedBeforeParsing() throws {
        assertRejects(String(repeating: "a", count: 1 << 20), with: .tooLarge)
        assertRejects(String(repeating: "é", count: 4097), with: .tooLarge, "length is measured in bytes")
        assertRejects(String(repeating: ".", count: JWTSigner.maximumTokenLength + 1), with: .tooLarge)
        assertRejects(String(repeating: "a", count: JWTSigner.maximumTokenLength), with: .malformed, "at the cap")
    }

    func testHeaderNotJSON() {
        for header in ["not json", "", "{", #"{"alg":"HS256""#, String(repeating: "[", count: 5000)] {
            assertRejects(craft(header: header, payload: validPayload), with: .malformed, String(header.prefix(20)))
        }
    }

    func testClaimsNotJSONOrIncomplete() {
        let header = #"{"alg":"HS256","typ":"JWT"}"#
        let payloads = [
            "not json", "", "[]", "null", #"{"sub":"u1"}"#,
            #"{"sub":"u1","sid":"s1","iat":\#(nowSeconds),"aud":"authenticated","role":"authenticated"}"#,
            #"{"sub":"u1","sid":"s1","iat":\#(nowSeconds),"exp":"tomorrow","#
                + #""aud":"authenticated","role":"authenticated"}"#,
            #"{"sub":"u1","sid":"s1","iat":\#(nowSeconds),"exp":\#(nowSeconds + 60),"aud":7,"role":"authenticated"}"#,
            String(repeating: "{\"a\":", count: 1000),
        ]
        for payload in payloads {
            assertRejects(craft(header: header, payload: payload), with: .malformed, String(payload.prefix(40)))
        }
    }

    func testNonBase64PayloadWithValidSignature() {
        let input = Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8)) + ".Zh"
        let token = input + "." + Base64URL.encode(HMACSHA256.authenticationCode(for: input.utf8, key: Self.secret))
        assertRejects(token, with: .malformed)
    }
}
