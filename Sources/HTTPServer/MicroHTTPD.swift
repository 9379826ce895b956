internal import CMicroHTTPD
import Foundation

// The only file that touches libmicrohttpd. Everything here is internal: C types never reach the
// module's public API.

/// `send`'s flag that keeps a peer's close from raising SIGPIPE. Declared here for the WebSocket files: in a
/// release build (whole-module) the constant resolves only where CMicroHTTPD is imported.
let sendWithoutSignal = Int32(MSG_NOSIGNAL)

/// A connection as libmicrohttpd hands it to us. Valid from the access handler's first call until the
/// request-completed callback; while suspended, MHD keeps it alive until we resume it.
struct ConnectionHandle: @unchecked Sendable {
    // @unchecked: a raw MHD pointer; MHD allows resume from any thread (the daemon runs with ITC),
    // and the other calls happen on the event thread that called us.
    let pointer: OpaquePointer

    func header(_ name: String) -> String? {
        MHD_lookup_connection_value(pointer, .HEADER_KIND, name).map { String(cString: $0) }
    }

    func headers() -> HTTPHeaders { HTTPHeaders(fieldsOf: self, kind: .HEADER_KIND) }

    func queryArguments() -> [(name: String, value: String)] {
        HTTPHeaders(fieldsOf: self, kind: .GET_ARGUMENT_KIND).fields
    }

    func clientAddress() -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            cmhd_client_address(pointer, buffer.baseAddress!, buffer.count)
            return String(cString: buffer.baseAddress!)
        }
    }

    /// Queues `response`; false when MHD refused (the connection is then closed).
    func queue(_ response: Response) -> Bool {
        let mhdResponse = response.body.withUnsafeBytes { bytes -> OpaquePointer? in
            // MUST_COPY: MHD copies the bytes before this closure returns, so the pointer does not escape.
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return false }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in response.headers {
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        return MHD_queue_response(pointer, UInt32(response.status), mhdResponse) == .YES
    }

    /// Queues `response`, whose body is its `stream`: MHD sends it chunked as the stream's bytes come. The
    /// socket's send buffer is set to the stream's limit, so a consumer that stops reading fills it (and then the
    /// stream's own buffer) soon, instead of the kernel holding megabytes for it.
    func queue(_ response: Response, streaming stream: EventStream) -> Bool {
        let reader = Unmanaged.passRetained(StreamReader(stream: stream, connection: self)).toOpaque()
        // The free callback releases the reader, also when the response is refused below.
        guard
            let mhdResponse = MHD_create_response_from_callback(
                UInt64.max, 4096, streamReadTrampoline, reader, streamFreeTrampoline)
        else {
            Unmanaged<StreamReader>.fromOpaque(reader).release()
            return false
        }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in response.headers {
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        var size = Int32(stream.bufferLimit)
        setsockopt(
            cmhd_connection_socket(pointer), SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        return MHD_queue_response(pointer, UInt32(response.status), mhdResponse) == .YES
    }

    /// Queues a `101` whose connection becomes a WebSocket once sent: `upgradeTrampoline` finds what to do in the
    /// request's context (`RequestContext.upgrade`), which MHD keeps until the upgraded connection closes.
    func queueUpgrade(_ response: Response, server: HTTPServer) -> Bool {
        let context = Unmanaged.passUnretained(server).toOpaque()
        guard let mhdResponse = MHD_create_response_for_upgrade(upgradeTrampoline, context) else { return false }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in response.headers {
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        return MHD_queue_response(pointer, UInt32(response.status), mhdResponse) == .YES
    }

    /// Writes `response` straight to the socket, for an answer while the body is still arriving (MHD 0.9.75
    /// queues responses only before the body or after it); the caller then has MHD close the connection. The
    /// answer is small and nothing else is being written, so one send takes it whole.
    func writeAndClose(_ response: Response) {
        let reason = MHD_get_reason_phrase_for(UInt32(response.status)).map { String(cString: $0) } ?? ""
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for (name, value) in response.headers
        where !["content-length", "connection"].contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        head += "Connection: close\r\nContent-Length: \(response.body.count)\r\n\r\n"
        let bytes = Array(head.utf8) + response.body
        let socket = cmhd_connection_socket(pointer)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, sendWithoutSignal) }
    }

    /// The guard's record of this connection (set when MHD announced it).
    var tracked: TrackedConnection? {
        cmhd_socket_context(pointer).map { Unmanaged<TrackedConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// How many header fields named `name` the request carries.
    func headerCount(_ name: String) -> Int { Int(cmhd_header_count(pointer, name)) }

    func suspend() { MHD_suspend_connection(pointer) }
    func resume() { MHD_resume_connection(pointer) }
}

extension HTTPHeaders {
    fileprivate init(fieldsOf connection: ConnectionHandle, kind: MHD_ValueKind) {
        self.init()
        // The iterator's context is `self`, borrowed for the duration of the synchronous call only. The sized
        // variant keeps a decoded `%00` inside a value instead of cutting the value short there.
        withUnsafeMutablePointer(to: &self) { headers in
            _ = MHD_get_connection_values_n(
                connection.pointer, kind,
                { context, _, key, keySize, value, valueSize in
                    guard let context, let key else { return .YES }
                    let headers = context.assumingMemoryBound(to: HTTPHeaders.self)
                    headers.pointee.add(
                        Self.text(key, count: keySize), value.map { Self.text($0, count: valueSize) } ?? "")
                    return .YES
                }, headers)
        }
    }

    private static func text(_ pointer: UnsafePointer<CChar>, count: Int) -> String {
        pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }
}

/// Settings of the libmicrohttpd daemon.
struct DaemonSettings {
    var host: String
    var port: Int
    var threadPoolSize: Int
    var connectionTimeoutSeconds: Int
    var connectionMemoryLimit: Int
    /// MHD's own cap, a backstop above the guard's (which refuses first, and says so in the log).
    var connectionLimit: Int
}

/// Owns one running MHD daemon. `stop()` (or deinit) stops it.
final class MicroHTTPDDaemon: @unchecked Sendable {
    // @unchecked: `daemon` is set once in init and cleared once in stop(), which the server serialises.
    private var daemon: OpaquePointer?
    let port: Int

    /// Starts listening. `server` receives every callback; it is held unretained, so it must outlive the daemon
    /// (HTTPServer stops the daemon before it goes away).
    init(settings: DaemonSettings, server: HTTPServer) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(settings.port).bigEndian)
        let host = settings.host == "localhost" ? "127.0.0.1" : settings.host
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HTTPServerError.invalidHost(settings.host)
        }
        let flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_ALLOW_UPGRADE.rawValue | MHD_USE_TURBO.rawValue
        let context = Unmanaged.passUnretained(server).toOpaque()
        let started = withUnsafePointer(to: &address) { addressPointer in
            cmhd_start_daemon(
                flags, addressPointer, acceptPolicyTrampoline, context, accessHandlerTrampoline, context,
                requestCompletedTrampoline, context,
                UInt32(max(1, settings.threadPoolSize)), UInt32(settings.connectionTimeoutSeconds),
                settings.connectionMemoryLimit, UInt32(settings.connectionLimit), 1024,
                notifyConnectionTrampoline, context)
        }
        guard let started else { throw HTTPServerError.couldNotStart(host: settings.host, port: settings.port) }
        daemon = started
        port = Int(cmhd_bound_port(started))
    }

    /// Closes every connection and joins MHD's threads. Every suspended connection must be resumed first.
    func stop() {
        guard let daemon else { return }
        self.daemon = nil
        MHD_stop_daemon(daemon)
    }

    deinit { stop() }
}

/// MHD asks before serving each accepted connection; no closes it at once.
private func acceptPolicyTrampoline(
    context: UnsafeMutableRawPointer?, address: UnsafePointer<sockaddr>?, addressLength: socklen_t
) -> MHD_Result {
    guard let context, let address else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    guard server.acceptsConnections else { return .NO }
    return server.connectionGuard.admit(ClientAddressKey(address)) ? .YES : .NO
}

/// MHD announces each connection once when it starts and once when it closes (before closing its socket).
private func notifyConnectionTrampoline(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    code: MHD_ConnectionNotificationCode
) {
    guard let context, let connection, let socketContext else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        guard let address = cmhd_client_sockaddr(connection) else { return }
        let tracked = TrackedConnection(socket: cmhd_connection_socket(connection), address: ClientAddressKey(address))
        // Retained here, released when the connection closes.
        socketContext.pointee = Unmanaged.passRetained(tracked).toOpaque()
        server.connectionGuard.opened(tracked)
    case .CONNECTION_NOTIFY_CLOSED:
        guard let existing = socketContext.pointee else { return }
        socketContext.pointee = nil
        let tracked = Unmanaged<TrackedConnection>.fromOpaque(existing)
        let connection = tracked.takeUnretainedValue()
        // MHD has shut down its side for writing and closes the socket next: a copy keeps it open to drain.
        if connection.lingers.load(ordering: .relaxed) { server.lingeringClose.adopt(connection.socket) }
        server.connectionGuard.closed(connection)
        tracked.release()
    default:
        return
    }
}

extension ClientAddressKey {
    fileprivate init(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            self.init(high: 0, low: UInt64(UInt32(bigEndian: ipv4)))
        case AF_INET6:
            let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            let (high, low) = withUnsafeBytes(of: bytes) { raw in
                (
                    raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                )
            }
            self.init(high: high, low: low)
        default:
            self.init(high: .max, low: .max)
        }
    }
}

/// MHD's access handler: called when the headers are in, once per body chunk, and once more after the body
/// (and again after a resume). The per-request `RequestContext` lives in `*requestContext`.
private func accessHandlerTrampoline(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?, requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection, let url, let method, let uploadDataSize, let requestContext else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    let handle = ConnectionHandle(pointer: connection)

    // The URI log callback leaves a marker as the first context when the path held `%00` (see cmhd_uri_log).
    let nulInPath = requestContext.pointee == cmhd_nul_in_path()
    guard let existing = requestContext.pointee, !nulInPath else {
        let state = server.begin(
            connection: handle, method: String(cString: method), path: String(cString: url), nulInPath: nulInPath)
        // Retained here, released in requestCompletedTrampoline.
        requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
        return server.afterHeaders(state, connection: handle) ? .YES : .NO
    }
    let state = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()
    if uploadDataSize.pointee > 0 {
        let chunk = UnsafeRawBufferPointer(start: uploadData, count: uploadDataSize.pointee)
        let keepGoing = server.receive(chunk, for: state, connection: handle)
        uploadDataSize.pointee = 0
        return keepGoing ? .YES : .NO
    }
    return server.bodyComplete(state, connection: handle) ? .YES : .NO
}

/// MHD calls this once per request when it is done with it, whatever happened.
private func requestCompletedTrampoline(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, termination: MHD_RequestTerminationCode
) {
    if let context, let connection, let tracked = ConnectionHandle(pointer: connection).tracked {
        Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().connectionGuard.requestFinished(tracked)
    }
    guard let requestContext, let existing = requestContext.pointee, existing != cmhd_nul_in_path() else { return }
    requestContext.pointee = nil
    let state = Unmanaged<RequestContext>.fromOpaque(existing)
    // A `101` queued but never sent: its connection will not be upgraded.
    if let (upgrade, _) = state.takeUnretainedValue().upgrade { upgrade.abandoned?() }
    // Balances the passRetained in accessHandlerTrampoline.
    state.release()
}

/// An upgraded socket, taken from MHD at the upgrade (a `dup` of its socket; MHD's connection is closed at once):
/// MHD keeps every upgraded connection in its list of suspended ones, which it walks on every resume (each async
/// request), and keeps its memory pool; closing it gives the connection's slot back.
struct UpgradeHandle: Sendable {
    let socket: Int32
    let released: @Sendable () -> Void

    func close() {
        _ = Foundation.close(socket)
        released()
    }
}

/// MHD sent a `101` and hands over the socket (with any bytes the client sent after its request).
private func upgradeTrampoline(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, requestContext: UnsafeMutableRawPointer?,
    extraIn: UnsafePointer<CChar>?, extraInSize: Int, socket: Int32, handle: OpaquePointer?
) {
    guard let handle else { return }
    guard let context, let connection, let requestContext, requestContext != cmhd_nul_in_path() else {
        return cmhd_upgrade_close(handle)
    }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    let state = Unmanaged<RequestContext>.fromOpaque(requestContext).takeUnretainedValue()
    let initial = extraIn.map { Array(UnsafeRawBufferPointer(start: $0, count: extraInSize)) } ?? []
    let tracked = ConnectionHandle(pointer: connection).tracked
    let own = dup(socket)
    // The slot stays taken until the WebSocket closes (MHD's close of its connection no longer frees it).
    tracked?.upgraded.store(true, ordering: .relaxed)
    cmhd_upgrade_close(handle)
    guard own >= 0 else {  // out of file descriptors: as if the client had left before the upgrade
        if let tracked { server.connectionGuard.releaseUpgraded(tracked) }
        if let (upgrade, _) = state.upgrade { upgrade.abandoned?() }
        state.upgrade = nil
        return
    }
    let upgrade = UpgradeHandle(socket: own) { [server] in
        if let tracked { server.connectionGuard.releaseUpgraded(tracked) }
    }
    server.upgraded(state, socket: own, handle: upgrade, initial: initial, tracked: tracked)
}

/// A streamed response's reader: the stream and the connection it is written to (the reader callback is not told
/// the connection, which it suspends while nothing is pending).
private final class StreamReader {
    let stream: EventStream
    let connection: ConnectionHandle

    init(stream: EventStream, connection: ConnectionHandle) {
        self.stream = stream
        self.connection = connection
    }
}

/// MHD asks for the next bytes of a streamed body when the socket can take them.
private func streamReadTrampoline(
    context: UnsafeMutableRawPointer?, position: UInt64, buffer: UnsafeMutablePointer<CChar>?, max: Int
) -> Int {
    // MHD_CONTENT_READER_END_OF_STREAM and _END_WITH_ERROR: C macros with casts, not imported.
    let endOfStream = -1
    let endWithError = -2
    guard let context, let buffer else { return endWithError }
    let reader = Unmanaged<StreamReader>.fromOpaque(context).takeUnretainedValue()
    switch reader.stream.read(
        into: UnsafeMutableRawBufferPointer(start: buffer, count: max), connection: reader.connection)
    {
    case .bytes(let count): return count
    case .parked: return 0
    case .end: return endOfStream
    case .failed: return endWithError
    }
}

/// MHD is done with a streamed response: the connection closed or the stream ended.
private func streamFreeTrampoline(context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let reader = Unmanaged<StreamReader>.fromOpaque(context)
    reader.takeUnretainedValue().stream.connectionClosed()
    reader.release()
}
