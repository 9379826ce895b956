import Foundation
import QuoteVault

/// A row change as migration 0082's trigger notifies it, and its `data` as Realtime puts it on the wire (encoded
/// once, whatever the number of subscribers).
struct RealtimeChange: Sendable {
    let table: String
    let type: String
    /// Whose row it is (nil for public tables, and for a row whose owner could not be found).
    let owner: UUID?
    let record: [String: JSONValue]?
    let oldRecord: [String: JSONValue]?
    /// `data`: `{schema, table, commit_timestamp, type, record, old_record, columns, errors}`.
    let data: String

    init?(notification payload: String) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8)),
            let table = value["table"]?.stringValue, RealtimeSubscription.tables.contains(table),
            let type = value["type"]?.stringValue, let stamp = value["at"]?.stringValue
        else { return nil }
        self.table = table
        self.type = type
        self.owner = value["owner"]?.stringValue.flatMap(UUID.init(uuidString:))
        if case .object(let row)? = value["record"] { record = row } else { record = nil }
        if case .object(let row)? = value["old_record"] { oldRecord = row } else { oldRecord = nil }
        let columns = (RestSchema.tables[table]?.columns ?? []).map { column -> JSONValue in
            .object(["name": .string(column.name), "type": .string(column.type)])
        }
        var data: [String: JSONValue] = [
            "schema": .string("public"), "table": .string(table), "commit_timestamp": .string(stamp),
            "type": .string(type), "columns": .array(columns),
            "errors": value["oversize"] == .bool(true) ? .array([.string("Error 413: Payload Too Large")]) : .null,
        ]
        if let record { data["record"] = .object(record) }
        if let oldRecord { data["old_record"] = .object(oldRecord) }
        self.data = PhoenixMessage.json(.object(data))
    }

    /// The row a filter is applied to: the new one, or the old one of a DELETE.
    var row: [String: JSONValue]? { record ?? oldRecord }
}
