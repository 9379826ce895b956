import Foundation
import HTTPServer
import QuoteVault

/// The serializer a client asked for with `vsn`: 1.0.0 sends each message as a JSON object, 2.0.0 (supabase-swift
/// 2.55.1's default) as an array `[join_ref, ref, topic, event, payload]`.
enum PhoenixVersion: String, Sendable {
    case v1 = "1.0.0"
    case v2 = "2.0.0"
}

/// One Phoenix channel message, either way.
struct PhoenixMessage: Sendable {
    var joinRef: String?
    var ref: String?
    var topic: String
    var event: String
    var payload: JSONValue

    /// A client's message; nil when the text is no Phoenix message of that version.
    static func decode(_ text: String, version: PhoenixVersion) -> PhoenixMessage? {
        guard let value = try? JSONValue(jsonText: text) else { return nil }
        switch (version, value) {
        case (.v1, .object(let fields)):
            guard case .string(let topic)? = fields["topic"], case .string(let event)? = fields["event"] else {
                return nil
            }
            return PhoenixMessage(
                joinRef: fields["join_ref"]?.refText, ref: fields["ref"]?.refText, topic: topic, event: event,
                payload: fields["payload"] ?? .object([:]))
        case (.v2, .array(let items)):
            guard items.count == 5, case .string(let topic) = items[2], case .string(let event) = items[3] else {
                return nil
            }
            return PhoenixMessage(
                joinRef: items[0].refText, ref: items[1].refText, topic: topic, event: event, payload: items[4])
        default:
            return nil
        }
    }

    /// The text of a server message whose payload is already JSON text (encoded once for many sockets).
    static func encode(
        topic: String, event: String, payload: String, ref: String? = nil, joinRef: String? = nil,
        version: PhoenixVersion
    ) -> String {
        let topicText = jsonString(topic)
        let eventText = jsonString(event)
        let refText = ref.map(jsonString) ?? "null"
        let joinRefText = joinRef.map(jsonString) ?? "null"
        switch version {
        case .v1:
            return
                #"{"topic":\#(topicText),"event":\#(eventText),"payload":\#(payload),"ref":\#(refText),"join_ref":\#(joinRefText)}"#
        case .v2:
            return "[\(joinRefText),\(refText),\(topicText),\(eventText),\(payload)]"
        }
    }

    /// `text` as a JSON string (every reply and message names its topic, event and refs this way: a JSONEncoder
    /// each would cost more than the rest of a heartbeat's answer).
    static func jsonString(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 8)
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func json(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }
}

extension JSONValue {
    /// A ref as clients send it: a string, or (some clients) a number.
    fileprivate var refText: String? {
        switch self {
        case .string(let text): text
        case .number(let number): number == number.rounded() ? String(Int(number)) : String(number)
        default: nil
        }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { fields[key] } else { nil }
    }
}
