import AuthJWT
import Foundation

/// A `101 Switching Protocols` answer: once libmicrohttpd has sent it, the socket becomes a `WebSocketConnection`
/// and `open` gives the handler of its messages.
public struct WebSocketUpgrade: Sendable {
    public let settings: WebSocketSettings
    public let open: @Sendable (WebSocketConnection) -> any WebSocketHandler
    /// Called instead of `open` when the connection ends before it is upgraded (the client left before the `101`
    /// was sent, or the server is stopping), so that whatever was set aside for it is given back.
    public let abandoned: (@Sendable () -> Void)?

    /// The answer to a WebSocket handshake (RFC 6455 §4.2): `101` with `Sec-WebSocket-Accept`, or the refusal of a
    /// request that is no handshake (`400`) or asks for another version than 13 (`426` with the one supported).
    public static func response(
        to request: Request, settings: WebSocketSettings = WebSocketSettings(),
        abandoned: (@Sendable () -> Void)? = nil,
        open: @escaping @Sendable (WebSocketConnection) -> any WebSocketHandler
    ) -> Response {
        let tokens = { (name: String) in
            (request.headers[name] ?? "").lowercased().split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
        guard tokens("Upgrade").contains("websocket"), tokens("Connection").contains("upgrade") else {
            var refusal = HTTPError.badRequest("A WebSocket handshake is expected (Upgrade: websocket)")
            refusal.status = 426
            refusal.headers = ["Upgrade": "websocket", "Sec-WebSocket-Version": "13"]
            return refusal.response
        }
        guard request.headers["Sec-WebSocket-Version"] == "13" else {
            var refusal = HTTPError.badRequest("Only WebSocket version 13 is supported")
            refusal.status = 426
            refusal.headers = ["Sec-WebSocket-Version": "13"]
            return refusal.response
        }
        guard let key = request.headers["Sec-WebSocket-Key"], Data(base64Encoded: key)?.count == 16 else {
            return HTTPError.badRequest("Sec-WebSocket-Key must be 16 bytes in base64").response
        }
        var response = Response(status: 101)
        response.headers.set("Upgrade", "websocket")
        response.headers.set("Connection", "Upgrade")
        response.headers.set("Sec-WebSocket-Accept", acceptValue(for: key))
        response.upgrade = WebSocketUpgrade(settings: settings, open: open, abandoned: abandoned)
        return response
    }

    /// base64(SHA-1(key + the protocol's GUID)).
    static func acceptValue(for key: String) -> String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        return Data(Digest.sha1(input)).base64EncodedString()
    }
}
