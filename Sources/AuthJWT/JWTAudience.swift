/// The `aud` claim: one audience (a JSON string) or several (a JSON array).
///
/// Write a single audience as a string literal: `aud: "authenticated"`.
public struct JWTAudience: Codable, Sendable, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The audiences, in token order.
    public var values: [String]

    /// One audience; encodes as a JSON string.
    public init(_ audience: String) {
        values = [audience]
    }

    /// Several audiences; encodes as a JSON array unless there is exactly one.
    public init(_ audiences: [String]) {
        values = audiences
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Whether `audience` is among the values.
    public func contains(_ audience: String) -> Bool {
        values.contains(audience)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let single = try? container.decode(String.self) {
            values = [single]
        } else {
            values = try container.decode([String].self)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if values.count == 1 {
            try container.encode(values[0])
        } else {
            try container.encode(values)
        }
    }

    public var description: String { values.joined(separator: ",") }
}
