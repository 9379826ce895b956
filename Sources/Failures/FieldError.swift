/// One invalid input field, named as the client sent it.
public struct FieldError: Sendable, Equatable, Codable {
    public var field: String
    public var message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

extension [FieldError] {
    /// What `check` returns, or nil with the fields it refused added here: so that every invalid field of a request
    /// is reported together. Any other error is thrown.
    @discardableResult
    public mutating func collect<T>(_ check: () throws -> T) throws -> T? {
        do { return try check() } catch Failure.validation(let errors) {
            self += errors
            return nil
        }
    }
}
