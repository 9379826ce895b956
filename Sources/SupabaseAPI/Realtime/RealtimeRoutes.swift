import Failures
import HTTPServer

/// `GET /realtime/v1/websocket?apikey=…&vsn=…`: Supabase Realtime's door, upgraded to a WebSocket on the same port.
struct RealtimeRoutes {
    let context: SupabaseContext

    /// The handshake's handler: a `101` that hands the socket to the Realtime hub, or a refusal.
    var handshake: Handler { Handler { request in try upgrade(request) } }

    /// The key is the `apikey` query argument (browsers cannot set headers on a WebSocket), or the header; the
    /// version `vsn` 1.0.0 (the default, supabase-py) or 2.0.0 (supabase-swift 2.55.1's default).
    private func upgrade(_ request: Request) throws -> Response {
        let hub = context.realtime
        guard let key = request.queryValue("apikey") ?? request.headers["apikey"] else {
            return refusal(401, "missing_key", "apikey is required")
        }
        guard let caller = hub.keys.role(of: key) else { return refusal(401, "invalid_key", "apikey is not valid") }
        guard let version = PhoenixVersion(rawValue: request.queryValue("vsn") ?? "1.0.0") else {
            return refusal(400, "unsupported_version", "vsn must be 1.0.0 or 2.0.0")
        }
        let address = request.clientAddress
        let socket: RealtimeSocket
        switch hub.open(version: version, caller: caller, address: address) {
        case .success(let opened): socket = opened
        case .failure(.address):
            var response = refusal(
                429, "too_many_connections",
                "at most \(hub.limits.connectionsPerAddress) Realtime connections from one address")
            response.headers.set("Retry-After", "30")
            return response
        case .failure(.instance):
            var response = refusal(
                503, "realtime_full", "this instance holds all the Realtime connections it may; try again later")
            response.headers.set("Retry-After", "30")
            return response
        }
        let response = WebSocketUpgrade.response(
            to: request, settings: hub.limits.socket, abandoned: { hub.remove(socket) },
            open: { connection in
                socket.attach(connection)
                return socket
            })
        // A handshake refused after the socket was counted gives its place back.
        if response.upgrade == nil { hub.remove(socket) }
        return response
    }

    private func refusal(_ status: Int, _ code: String, _ message: String) -> Response {
        HTTPError(status: status, code: code, title: message, detail: message).response
    }
}
