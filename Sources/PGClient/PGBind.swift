/// A PostgreSQL type OID, sent with each parameter so the server knows how to read it.
/// `.unknown` (0) lets the server infer the type from context, which is what plain
/// strings want: the same text can then fill a `text`, `uuid`, `citext` or enum column.
public struct PGType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unknown = PGType(rawValue: 0)
    public static let bool = PGType(rawValue: 16)
    public static let bytea = PGType(rawValue: 17)
    public static let int8 = PGType(rawValue: 20)
    public static let int2 = PGType(rawValue: 21)
    public static let int4 = PGType(rawValue: 23)
    public static let text = PGType(rawValue: 25)
    public static let json = PGType(rawValue: 114)
    public static let float4 = PGType(rawValue: 700)
    public static let float8 = PGType(rawValue: 701)
    public static let int2Array = PGType(rawValue: 1005)
    public static let int4Array = PGType(rawValue: 1007)
    public static let int8Array = PGType(rawValue: 1016)
    public static let date = PGType(rawValue: 1082)
    public static let timestamptz = PGType(rawValue: 1184)
    public static let uuid = PGType(rawValue: 2950)
    public static let uuidArray = PGType(rawValue: 2951)
    public static let jsonb = PGType(rawValue: 3802)
}

/// One query parameter: its type and its value in the wire format libpq sends.
///
/// Printing a bind never shows the value (it may be a password hash or an e-mail address).
public struct PGBind: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The parameter's value as sent.
    public enum Value: Sendable, Hashable {
        case null
        /// Text format; must not contain NUL bytes (PostgreSQL text cannot hold them).
        case text(String)
        /// Binary format; used for bytea so large blobs are not hex-encoded on the way out.
        case binary([UInt8])
    }

    public var type: PGType
    public var value: Value

    public init(type: PGType, value: Value) {
        self.type = type
        self.value = value
    }

    /// The bind for any encodable value (NULL for `nil` optionals).
    public init<T: PGEncodable>(_ value: T) {
        self.init(type: T.pgType, value: value.pgEncode())
    }

    public var description: String { "****" }
    public var debugDescription: String { "****" }
    // Keeps `dump()` and debugger summaries from printing the value.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
