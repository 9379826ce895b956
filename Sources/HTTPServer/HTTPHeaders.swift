/// Request or response header fields, kept in order. Names compare case-insensitively.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of the field `name`, if present.
    public subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field named `name` with one holding `value`.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
        fields.append((name: name, value: value))
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension String {
    /// ASCII case-insensitive comparison, which is what HTTP field names need.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 97 && (x | 0x20) <= 122)
        }
    }
}
