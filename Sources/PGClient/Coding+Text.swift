import Foundation

// Strings, booleans and UUIDs.

extension String: PGEncodable, PGDecodable {
    /// Sent untyped so the server reads the text as whatever the context needs
    /// (text, varchar, citext, uuid, an enum, ...).
    public static var pgType: PGType { .unknown }
    public func pgEncode() -> PGBind.Value { .text(self) }
    public init(pgText text: String) throws(PGError) { self = text }
}

extension Substring: PGEncodable {
    public static var pgType: PGType { .unknown }
    public func pgEncode() -> PGBind.Value { .text(String(self)) }
}

extension Bool: PGEncodable, PGDecodable {
    public static var pgType: PGType { .bool }
    public func pgEncode() -> PGBind.Value { .text(self ? "true" : "false") }
    public init(pgText text: String) throws(PGError) {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw .decodingFailure(Bool.self, text)
        }
    }
}

extension UUID: PGEncodable, PGDecodable {
    public static var pgType: PGType { .uuid }
    public func pgEncode() -> PGBind.Value { .text(canonicalText) }
    public init(pgText text: String) throws(PGError) {
        guard let value = UUID(canonicalText: text) ?? UUID(uuidString: text) else {
            throw .decodingFailure(UUID.self, text)
        }
        self = value
    }
}
