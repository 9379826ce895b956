/// Why a token was refused. Every case means "unauthenticated" to a client;
/// the distinction is for logs and tests.
public enum JWTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Longer than `JWTSigner.maximumTokenLength`; refused before any parsing.
    case tooLarge
    /// Not three canonical base64url parts, or a part is not the JSON expected.
    case malformed
    /// The header's `alg` is missing or anything but `HS256`.
    case unsupportedAlgorithm
    /// The header has a `typ` other than `JWT`, or a `crit` extension list.
    case unsupportedHeader
    /// The signature does not match.
    case badSignature
    /// `exp` is at or before now.
    case expired
    /// `nbf` is later than now (beyond the allowed clock skew).
    case notYetValid
    /// `iat` is later than now (beyond the allowed clock skew).
    case issuedInFuture
    /// `aud` does not contain the expected audience.
    case wrongAudience

    public var description: String {
        switch self {
        case .tooLarge: "token too large"
        case .malformed: "malformed token"
        case .unsupportedAlgorithm: "unsupported token algorithm"
        case .unsupportedHeader: "unsupported token header"
        case .badSignature: "bad token signature"
        case .expired: "token expired"
        case .notYetValid: "token not yet valid"
        case .issuedInFuture: "token issued in the future"
        case .wrongAudience: "token audience mismatch"
        }
    }
}
