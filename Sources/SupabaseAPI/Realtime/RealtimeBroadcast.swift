import Foundation
import QuoteVault

/// A user broadcast on its way to the sockets joined to a topic.
///
/// A JSON payload travels as the `{type, event, payload}` object, sent as text to every receiver. A binary payload
/// (vsn 2.0.0's binary push with encoding 0) reaches 2.0.0 receivers as Realtime's binary frame of kind 4; vsn
/// 1.0.0 has no way to carry bytes, so its receivers get nothing of it, as from Realtime (which drops it for them).
enum RealtimeBroadcast: Sendable, Equatable {
    case json(String)
    case binary(event: String, bytes: [UInt8])

    /// Server to client, vsn 2.0.0: `[4, topic length, event length, meta length, encoding]`, the topic, the event,
    /// then the payload (encoding 0: binary; no metadata). Nil when a length does not fit its byte (a binary push
    /// carries both in one-byte lengths, so only a forged notification could).
    static func userBroadcastFrame(topic: String, event: String, bytes: [UInt8]) -> [UInt8]? {
        let topicBytes = Array(topic.utf8)
        let eventBytes = Array(event.utf8)
        guard topicBytes.count <= 255, eventBytes.count <= 255 else { return nil }
        return [4, UInt8(topicBytes.count), UInt8(eventBytes.count), 0, 0] + topicBytes + eventBytes + bytes
    }

    /// Bytes it takes in the notification that carries it to the other instances (binary goes as base64).
    var noticeSize: Int {
        switch self {
        case .json(let text): text.utf8.count
        case .binary(_, let bytes): (bytes.count + 2) / 3 * 4
        }
    }

    /// The notification for the other instances: `origin`, `topic`, then `broadcast` (the JSON text) or `event`
    /// and `binary` (base64).
    func notice(origin: String, topic: String) -> String {
        var fields: [String: JSONValue] = ["origin": .string(origin), "topic": .string(topic)]
        switch self {
        case .json(let text): fields["broadcast"] = .string(text)
        case .binary(let event, let bytes):
            fields["event"] = .string(event)
            fields["binary"] = .string(Data(bytes).base64EncodedString())
        }
        return PhoenixMessage.json(.object(fields))
    }

    /// What another instance's notification carries; nil when it carries no broadcast.
    init?(notice value: JSONValue) {
        if let text = value["broadcast"]?.stringValue {
            self = .json(text)
        } else if let event = value["event"]?.stringValue, let encoded = value["binary"]?.stringValue,
            let bytes = Data(base64Encoded: encoded)
        {
            self = .binary(event: event, bytes: Array(bytes))
        } else {
            return nil
        }
    }
}
