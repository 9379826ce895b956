import Foundation

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA-1, 30-second steps, 6 digits — what
/// every authenticator app uses by default.
public struct TOTP: Sendable {
    public static let digits = 6
    public static let stepSeconds: Int64 = 30
    /// Bytes of a new secret (160 bits, RFC 4226's recommendation).
    public static let secretByteCount = 20

    public let secret: [UInt8]

    public init(secret: [UInt8]) { self.secret = secret }

    /// A fresh random secret.
    public static func generateSecret() throws(OpenSSLError) -> [UInt8] {
        try SecureRandom.bytes(count: secretByteCount)
    }

    /// The time step `date` falls in.
    public static func step(at date: Date) -> Int64 {
        Int64(floor(date.timeIntervalSince1970)) / stepSeconds
    }

    /// The code of time step `step` (RFC 4226 section 5.3: dynamic truncation of the HMAC).
    public func code(step: Int64) -> String {
        let counter = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: step) >> (56 - 8 * UInt64($0))) }
        let tag = HMACSHA1.authenticationCode(for: counter, key: secret)
        let offset = Int(tag[tag.count - 1] & 0x0f)
        let value =
            (UInt32(tag[offset] & 0x7f) << 24) | (UInt32(tag[offset + 1]) << 16)
            | (UInt32(tag[offset + 2]) << 8) | UInt32(tag[offset + 3])
        let code = String(value % 1_000_000)
        return String(repeating: "0", count: Self.digits - code.count) + code
    }

    /// The step whose code `candidate` is, allowing one step of clock drift either way; nil when none matches.
    /// Compared in constant time.
    public func matchingStep(_ candidate: String, at date: Date) -> Int64? {
        let trimmed = candidate.filter { !$0.isWhitespace }
        guard trimmed.count == Self.digits, trimmed.allSatisfy(\.isASCII), trimmed.allSatisfy(\.isNumber) else {
            return nil
        }
        let now = Self.step(at: date)
        var found: Int64?
        let given = Array(trimmed.utf8)
        for step in [now - 1, now, now + 1] where ConstantTime.equals(Array(code(step: step).utf8), given) {
            found = step
        }
        return found
    }

    /// The `otpauth://` URI authenticator apps read (as text or a QR code).
    public func provisioningURI(account: String, issuer: String) -> String {
        var components = URLComponents()
        components.scheme = "otpauth"
        components.host = "totp"
        components.path = "/\(issuer):\(account)"
        components.queryItems = [
            URLQueryItem(name: "secret", value: Base32.encode(secret)), URLQueryItem(name: "issuer", value: issuer),
            URLQueryItem(name: "algorithm", value: "SHA1"), URLQueryItem(name: "digits", value: String(Self.digits)),
            URLQueryItem(name: "period", value: String(Self.stepSeconds)),
        ]
        return components.string ?? ""
    }
}
