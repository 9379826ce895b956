/// A Swift value that can be sent as a query parameter.
///
/// Conforming types pick the PostgreSQL type they are sent as and produce its text
/// (or, for bytea, binary) representation. Conform your own types (e.g. an enum stored as
/// text) by forwarding to `String`.
public protocol PGEncodable: Sendable {
    /// The parameter type announced to the server; `.unknown` lets the server infer it.
    static var pgType: PGType { get }
    /// The value as libpq sends it.
    func pgEncode() -> PGBind.Value
}

/// A Swift value that can be read from a text-format result column.
public protocol PGDecodable: Sendable {
    /// Decodes a non-NULL value from its text representation.
    ///
    /// Throw `PGError` with kind `.decoding` (e.g. `PGError.decodingFailure(Self.self, text)`);
    /// `PGRow` adds the column name.
    init(pgText text: String) throws(PGError)

    /// The value for SQL NULL. The default throws; `Optional` returns `nil`.
    static func pgDecodeNull() throws(PGError) -> Self
}

extension PGDecodable {
    public static func pgDecodeNull() throws(PGError) -> Self {
        throw PGError.unexpectedNull(Self.self)
    }
}

/// `nil` is sent as SQL NULL (typed like the wrapped value) and NULL decodes as `nil`.
extension Optional: PGEncodable where Wrapped: PGEncodable {
    public static var pgType: PGType { Wrapped.pgType }
    public func pgEncode() -> PGBind.Value {
        switch self {
        case .none: .null
        case .some(let wrapped): wrapped.pgEncode()
        }
    }
}

extension Optional: PGDecodable where Wrapped: PGDecodable {
    public init(pgText text: String) throws(PGError) {
        self = .some(try Wrapped(pgText: text))
    }
    public static func pgDecodeNull() throws(PGError) -> Self { nil }
}
