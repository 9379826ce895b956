/// One invalid input field, named as the client sent it.
public struct FieldError: Sendable, Equatable, Codable {
    public var field: String
    public var message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}
