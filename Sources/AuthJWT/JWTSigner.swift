#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Issues and verifies HS256 JSON Web Tokens (RFC 7519) carrying `AccessTokenClaims`.
///
/// Pure computation over its arguments — the clock is passed in — so it can be
/// unit-tested and fuzzed without HTTP.
public struct JWTSigner: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let key: HMACSHA256.Key

    /// Shortest secret accepted: RFC 7518 §3.2 requires an HS256 key of at least 256 bits.
    public static let minimumSecretLength = 32
    /// Longest token accepted, checked before any decoding so a huge header
    /// costs nothing. Our tokens are a few hundred bytes.
    public static let maximumTokenLength = 8 * 1024
    /// Allowed clock skew, in seconds, for `iat` and `nbf` lying in the future
    /// (servers' clocks differ slightly). `exp` gets no leeway.
    public static let clockSkew: TimeInterval = 60

    /// `{"alg":"HS256","typ":"JWT"}`, the only header we issue.
    private static let encodedHeader = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))

    /// Creates a signer with an HS256 key. A secret shorter than
    /// `minimumSecretLength` is a programming error and traps; validate
    /// configuration against that constant before calling.
    public init(secret: [UInt8]) {
        precondition(
            secret.count >= Self.minimumSecretLength,
            "JWTSigner: secret must be at least \(Self.minimumSecretLength) bytes")
        self.key = HMACSHA256.Key(secret)
    }

    /// Encodes and signs `claims`.
    ///
    /// - Throws: `EncodingError` if a claim cannot be encoded (e.g. a non-finite
    ///   number in metadata); `JWTError.tooLarge` if the token would exceed
    ///   `maximumTokenLength`, since `verify` would refuse it.
    public func sign(_ claims: AccessTokenClaims) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload = try encoder.encode(claims)
        let signingInput = Self.encodedHeader + "." + Base64URL.encode(payload)
        let tag = key.authenticationCode(for: signingInput.utf8)
        let token = signingInput + "." + Base64URL.encode(tag)
        guard token.utf8.count <= Self.maximumTokenLength else { throw JWTError.tooLarge }
        return token
    }

    /// Verifies `token` and returns its claims.
    ///
    /// Checks, in order: length cap; exactly three parts; header is canonical
    /// base64url JSON with `alg` exactly "HS256" (and `typ` absent or "JWT", no
    /// `crit`); the signature, compared in constant time, before the payload is
    /// even decoded; then `exp` > now (no leeway), `nbf` and `iat` not more
    /// than `clockSkew` after now, and `aud` containing `audience`.
    public func verify(
        _ token: String, audience: String = "authenticated", now: Date
    ) throws(JWTError) -> AccessTokenClaims {
        guard token.utf8.count <= Self.maximumTokenLength else { throw .tooLarge }
        let bytes = Array(token.utf8)
        let dot = UInt8(ascii: ".")
        guard let firstDot = bytes.firstIndex(of: dot),
            let secondDot = bytes[(firstDot + 1)...].firstIndex(of: dot),
            !bytes[(secondDot + 1)...].contains(dot)
        else { throw .malformed }

        guard let headerJSON = UnpaddedBase64.url.decode(bytes[..<firstDot]),
            let header = try? JSONDecoder().decode(JOSEHeader.self, from: Data(headerJSON))
        else { throw .malformed }
        try header.validate()

        guard let signature = UnpaddedBase64.url.decode(bytes[(secondDot + 1)...]) else { throw .malformed }
        let expected = key.authenticationCode(for: bytes[..<secondDot])
        guard ConstantTime.equals(signature, expected) else { throw .badSignature }

        // Only now, with the signature proven ours, is the payload parsed.
        guard let payloadJSON = UnpaddedBase64.url.decode(bytes[(firstDot + 1)..<secondDot]),
            let claims = try? JSONDecoder().decode(AccessTokenClaims.self, from: Data(payloadJSON))
        else { throw .malformed }

        let seconds = now.timeIntervalSince1970
        guard Double(claims.exp) > seconds else { throw .expired }
        if let nbf = claims.nbf, Double(nbf) > seconds + Self.clockSkew { throw .notYetValid }
        guard Double(claims.iat) <= seconds + Self.clockSkew else { throw .issuedInFuture }
        guard claims.aud.contains(audience) else { throw .wrongAudience }
        return claims
    }

    // The secret must never reach a log line through string interpolation or `dump`.
    public var description: String { "JWTSigner(HS256)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
