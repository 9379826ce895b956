/// The wire form of server-sent events (the WHATWG `text/event-stream` format).
public enum ServerSentEvent {
    /// `event: <name>` and one `data:` line; `data` must hold no line break (JSON from `JSONWriter` holds none).
    public static func event(_ name: String, data: String) -> [UInt8] {
        Array("event: \(name)\ndata: \(data)\n\n".utf8)
    }

    /// A comment line, which clients ignore: keeps proxies and the client from timing an idle stream out.
    public static func comment(_ text: String) -> [UInt8] {
        Array(": \(text)\n\n".utf8)
    }
}
