#if canImport(Glibc)
import Glibc
#endif
import Foundation
import QuoteVault
import Synchronization

/// A row change as migration 0082's trigger notifies it, and its `data` as Realtime puts it on the wire (encoded
/// once, whatever the number of subscribers; once per distinct `select` for subscriptions that narrow it).
struct RealtimeChange: Sendable {
    let table: String
    let type: String
    /// Whose row it is (nil for public tables, and for a row whose owner could not be found).
    let owner: UUID?
    let record: [String: JSONValue]?
    let oldRecord: [String: JSONValue]?
    /// When it was written (its transaction's start), for the delivery delay; nil if the stamp cannot be read.
    let writtenAt: Date?
    /// `data`: `{schema, table, commit_timestamp, type, record, old_record, columns, errors}`.
    let data: String
    private let stamp: String
    private let oversize: Bool
    private let narrowed = Narrowed()

    init?(notification payload: String) {
        guard let value = try? JSONValue(jsonText: payload),
            let table = value["table"]?.stringValue, RealtimeSubscription.tables.contains(table),
            let type = value["type"]?.stringValue, let stamp = value["at"]?.stringValue
        else { return nil }
        self.table = table
        self.type = type
        self.stamp = stamp
        self.writtenAt = Self.parseStamp(stamp)
        let oversize = value["oversize"] == .bool(true)
        self.oversize = oversize
        self.owner = value["owner"]?.stringValue.flatMap(UUID.init(uuidString:))
        var record: [String: JSONValue]?
        var oldRecord: [String: JSONValue]?
        if case .object(let row)? = value["record"] { record = row }
        if case .object(let row)? = value["old_record"] { oldRecord = row }
        self.record = record
        self.oldRecord = oldRecord
        data = Self.encode(
            table: table, type: type, stamp: stamp, oversize: oversize, record: record, oldRecord: oldRecord,
            columns: nil)
    }

    /// The row a filter is applied to: the new one, or the old one of a DELETE.
    var row: [String: JSONValue]? { record ?? oldRecord }

    /// `data` with only `columns` (a subscription's `select`); the whole of it for nil.
    func data(selecting columns: [String]?) -> String {
        guard let columns else { return data }
        return narrowed.value(for: columns) {
            Self.encode(
                table: table, type: type, stamp: stamp, oversize: oversize, record: record, oldRecord: oldRecord,
                columns: columns)
        }
    }

    private static func encode(
        table: String, type: String, stamp: String, oversize: Bool, record: [String: JSONValue]?,
        oldRecord: [String: JSONValue]?, columns selected: [String]?
    ) -> String {
        let keep = selected.map(Set.init)
        func narrow(_ row: [String: JSONValue]) -> JSONValue {
            .object(keep.map { keep in row.filter { keep.contains($0.key) } } ?? row)
        }
        let columns = (RestSchema.tables[table]?.columns ?? []).filter { keep?.contains($0.name) ?? true }.map {
            JSONValue.object(["name": .string($0.name), "type": .string($0.type)])
        }
        var data: [String: JSONValue] = [
            "schema": .string("public"), "table": .string(table), "commit_timestamp": .string(stamp),
            "type": .string(type), "columns": .array(columns),
            "errors": oversize ? .array([.string("Error 413: Payload Too Large")]) : .null,
        ]
        if let record { data["record"] = narrow(record) }
        if let oldRecord { data["old_record"] = narrow(oldRecord) }
        return PhoenixMessage.json(.object(data))
    }

    /// The trigger's `at`, `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, the writing transaction's `now()`).
    static func parseStamp(_ stamp: String) -> Date? {
        let parts = stamp.utf8.split(whereSeparator: { "-T:.Z".utf8.contains($0) }).map { Int(Substring($0)) }
        guard parts.count == 7, let fraction = parts[6], let year = parts[0], let month = parts[1],
            let day = parts[2], let hour = parts[3], let minute = parts[4], let second = parts[5]
        else { return nil }
        var time = tm()
        time.tm_year = Int32(year - 1900)
        time.tm_mon = Int32(month - 1)
        time.tm_mday = Int32(day)
        time.tm_hour = Int32(hour)
        time.tm_min = Int32(minute)
        time.tm_sec = Int32(second)
        let digits = stamp.split(separator: ".").last.map { $0.count - 1 } ?? 6
        let seconds = Double(timegm(&time)) + Double(fraction) / pow(10, Double(max(digits, 0)))
        return Date(timeIntervalSince1970: seconds)
    }

    /// The narrowed encodings made so far, shared by the sockets one change reaches.
    private final class Narrowed: Sendable {
        private let encoded = Mutex<[[String]: String]>([:])

        func value(for columns: [String], make: () -> String) -> String {
            if let known = encoded.withLock({ $0[columns] }) { return known }
            let made = make()
            encoded.withLock { $0[columns] = made }
            return made
        }
    }
}
