/// Why a stored password hash could not be used.
public enum PasswordHashError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a `$scrypt$ln=…,r=…,p=…$salt$hash` string we can read.
    case malformedHash
    /// Well-formed, but its cost parameters (or salt/hash sizes) are outside
    /// what we are willing to compute.
    case unsupportedParameters

    public var description: String {
        switch self {
        case .malformedHash: "malformed password hash"
        case .unsupportedParameters: "password hash parameters out of the supported range"
        }
    }
}
