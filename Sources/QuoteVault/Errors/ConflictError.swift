/// The request collides with something that already exists (`409 conflict`): e.g. a client-chosen collection id
/// that is taken.
public struct ConflictError: Error, Sendable, Equatable {
    public let detail: String
    public init(_ detail: String) { self.detail = detail }
}
