import QuoteVault

/// One tracked presence: the key it is listed under and its meta (the client's payload, stamped with a unique
/// `phx_ref` that names this presence on every instance).
struct PresenceMember: Sendable {
    let key: String
    let meta: JSONValue

    var ref: String { meta["phx_ref"]?.stringValue ?? "" }

    /// `{key: {metas: [meta, …]}}`, the shape of `presence_state` and of a `presence_diff`'s joins and leaves.
    static func grouped(_ members: [PresenceMember]) -> JSONValue {
        var byKey: [String: [JSONValue]] = [:]
        for member in members { byKey[member.key, default: []].append(member.meta) }
        return .object(byKey.mapValues { .object(["metas": .array($0)]) })
    }
}
