// Integers and floating point numbers in PostgreSQL's text format.

/// PostgreSQL's integer types (int2, int4, int8) as the Swift integers of their width.
public protocol PGInteger: FixedWidthInteger, PGEncodable, PGDecodable {}

extension PGInteger {
    public func pgEncode() -> PGBind.Value { .text(String(self)) }
    public init(pgText text: String) throws(PGError) {
        guard let value = Self(text) else { throw .decodingFailure(Self.self, text) }
        self = value
    }
}

extension Int: PGInteger { public static var pgType: PGType { .int8 } }
extension Int64: PGInteger { public static var pgType: PGType { .int8 } }
extension Int32: PGInteger { public static var pgType: PGType { .int4 } }
extension Int16: PGInteger { public static var pgType: PGType { .int2 } }

/// PostgreSQL's floating point types (float4, float8) as the Swift floating point types of their width.
public protocol PGFloat: BinaryFloatingPoint, LosslessStringConvertible, PGEncodable, PGDecodable {}

extension PGFloat {
    public func pgEncode() -> PGBind.Value { .text(pgFloatText(Double(self))) }
    public init(pgText text: String) throws(PGError) {
        // Swift reads PostgreSQL's NaN, Infinity and -Infinity too.
        guard let value = Self(text) else { throw .decodingFailure(Self.self, text) }
        self = value
    }
}

extension Double: PGFloat { public static var pgType: PGType { .float8 } }
extension Float: PGFloat { public static var pgType: PGType { .float4 } }

/// Swift prints "inf"/"nan", which not every server version reads; spell them PostgreSQL's way.
/// Finite values use Swift's shortest round-tripping form ("0.1", "1e-05").
private func pgFloatText(_ value: Double) -> String {
    if value.isNaN { return "NaN" }
    if value == .infinity { return "Infinity" }
    if value == -.infinity { return "-Infinity" }
    return String(value)
}
