/// One invalid input field, named as the client sent it.
public struct FieldError: Sendable, Equatable {
    public var field: String
    public var message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// What the services refuse, in the contract's terms. The HTTP layers turn each case into its status and code.
public enum QuoteVaultError: Error, Sendable, Equatable {
    case validation([FieldError])
    case notFound
    case emailExists
    case invalidCredentials
    case unauthorized
    case refreshTokenInvalid
    case refreshTokenReused
    case resetTokenInvalid
    case unsupportedMediaType(String)
    case rateLimited(retryAfterSeconds: Int)
    /// Too much work queued (e.g. password hashing): try again shortly.
    case busy(retryAfterSeconds: Int)

    /// A single invalid field.
    public static func invalid(_ field: String, _ message: String) -> QuoteVaultError {
        .validation([FieldError(field: field, message: message)])
    }
}
