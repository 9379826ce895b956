import Foundation

/// An HTTP response: status, header fields and the whole body.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// `body` already gzip-compressed (a `PreparedBody`'s), sent instead of compressing it again.
    var gzippedBody: [UInt8]?
    /// A refusal of a request past a bound the client chose to cross (such as a pattern too long): sent after
    /// the server's refusal delay, as every `429` and every `413` decided from the headers are.
    public var isRefusalPastABound = false
    /// A body written over time instead of `body` (sent chunked; the connection stays open until it ends).
    public var stream: EventStream?
    /// A `101` that hands the connection over to a WebSocket handler (`WebSocketUpgrade.response`).
    public var upgrade: WebSocketUpgrade?

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `204 No Content`.
    public static var noContent: Response { Response(status: 204) }

    /// A `text/event-stream` answer whose events the caller writes to `stream` later.
    public static func eventStream(_ stream: EventStream, headers: HTTPHeaders = [:]) -> Response {
        var response = Response(status: 200, headers: headers)
        response.headers.set("Content-Type", "text/event-stream; charset=utf-8")
        response.headers.set("Cache-Control", "no-store")
        // A proxy that buffers answers (nginx) would hold the events back.
        response.headers.set("X-Accel-Buffering", "no")
        response.stream = stream
        return response
    }

    /// A JSON body encoded with the API's conventions (RFC 3339 dates with milliseconds).
    public static func json<T: Encodable>(_ value: T, status: Int = 200, headers: HTTPHeaders = [:]) throws -> Response
    {
        json(bytes: try JSONCoding.encode(value), status: status, headers: headers)
    }

    /// Pre-encoded JSON bytes.
    public static func json(bytes: [UInt8], status: Int = 200, headers: HTTPHeaders = [:]) -> Response {
        var response = Response(status: status, headers: headers, body: bytes)
        response.headers.set("Content-Type", "application/json; charset=utf-8")
        return response
    }
}
