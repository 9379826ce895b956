import AuthJWT
import Foundation
import PGClient

/// Any JSON value, decoded exactly: `true` is a boolean and `1` a number, never each other. Used where a
/// body's absent, null and present fields mean different things (PATCH). The same type as the free-form
/// JWT claims, so there is one JSON value type in the code base.
public typealias JSONValue = ClaimValue

extension ClaimValue {
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }
}

extension PGJSON {
    /// The document as an object; empty when it is not one.
    var object: [String: JSONValue] { (try? JSONValue(jsonBytes: Array(data)))?.objectValue ?? [:] }
}
