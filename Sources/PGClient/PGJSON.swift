import Foundation

/// A JSON document for `jsonb`/`json` columns, kept as raw UTF-8 bytes.
public struct PGJSON: Sendable, Hashable {
    /// The UTF-8 JSON text.
    public var data: Data

    public init(data: Data) { self.data = data }

    /// Encodes `value` with `encoder` (a fresh `JSONEncoder` by default).
    public init<T: Encodable>(encoding value: T, encoder: JSONEncoder = JSONEncoder()) throws {
        self.data = try encoder.encode(value)
    }

    /// Decodes the document as `type`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: data)
    }

    /// The document as text.
    public var text: String { String(decoding: data, as: UTF8.self) }
}

extension PGJSON: PGEncodable, PGDecodable {
    /// Sent as jsonb; it is assignable to json columns too.
    public static var pgType: PGType { .jsonb }
    public func pgEncode() -> PGBind.Value { .text(text) }
    public init(pgText text: String) throws(PGError) { self.data = Data(text.utf8) }
}
