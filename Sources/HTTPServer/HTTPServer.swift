import Failures
import Foundation
import Logging
import Synchronization

/// How the server listens and how much it tolerates.
public struct HTTPServerConfiguration: Sendable {
    public var host: String
    /// `0` picks a free port; read it back from `HTTPServer.port`.
    public var port: Int
    /// libmicrohttpd event threads (epoll). Handlers that block never run on them.
    public var eventThreads: Int
    /// An idle connection (no bytes in either direction) is closed after this many seconds.
    public var connectionTimeoutSeconds: Int
    /// Per-connection buffer for the request line and headers; larger headers get `431`/`413` from MHD.
    public var connectionMemoryLimit: Int
    /// Open connections in all; by default sized to memory and file descriptors (`memorySizedConnectionLimit`).
    public var connectionLimit: Int
    /// Open connections from one IP address.
    public var connectionsPerAddress: Int
    /// A request's headers must be complete within this long of the connection opening or of the previous
    /// response (a deadline, not an idle timeout: bytes trickled in do not extend it).
    public var headerTimeout: Duration
    /// The first request's header deadline of a connection opened while the table is more than three quarters
    /// full: idle connections then make room sooner (and when it is full, a new one evicts the oldest idle one).
    public var crowdedHeaderTimeout: Duration = .seconds(2)
    /// A request's whole body must arrive within this long of its headers.
    public var bodyTimeout: Duration
    /// Bytes of request bodies buffered at once, in all, counted as they arrive; beyond it requests get `503`
    /// with `Retry-After`.
    public var bodyBudget: Int
    /// The share of `bodyBudget` one IP address may hold.
    public var bodyBudgetPerAddress: Int
    /// Bodies declared at most this long are small (credentials, small JSON writes): they draw only on
    /// `smallBodyReserve`, a share of `bodyBudget` that large bodies (uploads) never take and of which one address
    /// may hold an eighth. 0: no reserve.
    public var smallBodyLimit = 64 * 1024
    public var smallBodyReserve = 0
    /// A body on a route that takes at most this many bytes (credentials) is held within its connection's own
    /// allowance, not the budget: one connection holds one such body, so no number of addresses can fill
    /// anything that logins and sign-ups need.
    public var connectionBodyAllowance = RoutePolicy.credentialBodyLimit
    /// The share of `bodyBudget` one account's large bodies may hold (the account as `bodyOwner` names it).
    public var bodyBudgetPerAccount = 8 << 20
    /// After `bodyGrace`, a body must average at least `bodyMinRate` bytes a second (Apache mod_reqtimeout's
    /// `MinRate`), so a stalled upload frees its share within seconds; 0: no minimum.
    public var bodyMinRate = 0
    public var bodyGrace: Duration = .seconds(2)
    /// New connections per second one IP address may open (bursts of twice that); beyond, they are closed at
    /// accept. 0: no limit. Keep-alive clients open few; a flood of short connections is refused cheaply.
    public var newConnectionsPerAddressPerSecond: Int
    /// On shutdown, requests in flight get this long to finish.
    public var shutdownGracePeriod: Duration
    /// Load balancers whose `X-Forwarded-For` names the client (`Request.clientAddress`).
    public var trustedProxies: TrustedProxies
    /// How long a refusal a flooding client earns (`429` Too Many Requests, `413` from the headers) waits before it
    /// is sent: a client looping on refusals then pays with time, not the server with CPU. The wait holds only the
    /// suspended connection (connections per address are capped), no thread. `.zero`: answer at once.
    public var refusalDelay: Duration

    public init(
        host: String = "127.0.0.1", port: Int = 8080, eventThreads: Int = 2, connectionTimeoutSeconds: Int = 30,
        connectionMemoryLimit: Int = 32 * 1024, connectionLimit: Int? = nil, connectionsPerAddress: Int = 128,
        headerTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(30), bodyBudget: Int = 64 << 20,
        bodyBudgetPerAddress: Int? = nil, newConnectionsPerAddressPerSecond: Int = 500,
        shutdownGracePeriod: Duration = .seconds(10), trustedProxies: TrustedProxies = .none,
        refusalDelay: Duration = .seconds(1)
    ) {
        self.host = host
        self.port = port
        self.eventThreads = eventThreads
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.connectionMemoryLimit = connectionMemoryLimit
        self.connectionLimit =
            connectionLimit ?? Self.memorySizedConnectionLimit(connectionMemoryLimit: connectionMemoryLimit)
        self.connectionsPerAddress = connectionsPerAddress
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.bodyBudget = bodyBudget
        self.bodyBudgetPerAddress = bodyBudgetPerAddress ?? bodyBudget / 4
        self.newConnectionsPerAddressPerSecond = newConnectionsPerAddressPerSecond
        self.shutdownGracePeriod = shutdownGracePeriod
        self.trustedProxies = trustedProxies
        self.refusalDelay = refusalDelay
    }

    /// Connections whose header buffers, all full, take at most 1/32 of physical memory, and that leave 128 file
    /// descriptors for everything else; between 256 and 4,096.
    public static func memorySizedConnectionLimit(connectionMemoryLimit: Int) -> Int {
        let byMemory = Int(ProcessInfo.processInfo.physicalMemory / 32) / max(1, connectionMemoryLimit)
        var files = rlimit()
        let byFiles =
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0 && files.rlim_cur < 1 << 31
            ? Int(files.rlim_cur) - 128 : .max
        return max(256, min(4096, byMemory, byFiles))
    }
}

/// What the server tells an observer (logs, metrics) about each answered request.
public struct CompletedRequest: Sendable {
    public let method: HTTPMethod
    /// The matched route's pattern, or `unmatched`.
    public let route: String
    public let status: Int
    public let duration: Duration
    public let requestID: String
    /// A refusal answered after `refusalDelay` on purpose: its duration is the delay, not the server's work.
    public let delayedRefusal: Bool

    public init(
        method: HTTPMethod, route: String, status: Int, duration: Duration, requestID: String,
        delayedRefusal: Bool = false
    ) {
        self.method = method
        self.route = route
        self.status = status
        self.duration = duration
        self.requestID = requestID
        self.delayedRefusal = delayedRefusal
    }
}

/// An HTTP/1.1 server over libmicrohttpd.
///
/// Requests are read on MHD's event threads. A route's async handler runs as a task while its connection is
/// suspended; the response is queued when MHD calls back after the resume (queueing in the very first call
/// would make MHD close keep-alive connections).
///
/// ```swift
/// let server = HTTPServer(configuration: .init(port: 0), router: Router(routes: routes), logger: logger)
/// try server.start()
/// print(server.port)
/// await server.shutdown()
/// ```
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `daemon` is written by start/shutdown only (the in-flight table is a `Mutex`).
    public let configuration: HTTPServerConfiguration
    public let router: Router
    private let logger: Logger
    private let observer: (@Sendable (CompletedRequest) -> Void)?
    private let classify: Classify
    /// Connection slots, deadlines and the request-body budget.
    let connectionGuard: ConnectionGuard
    /// Drains connections answered before their body was read.
    let lingeringClose = LingeringClose()
    private let overloadWarnings: RateLimitedWarning

    /// Turns anything a handler (or an authentication) throws into the one failure type, once.
    public typealias Classify = @Sendable (any Error) -> Failure

    /// Runs a request's deferred work (completing its credentials, then its handler) in a context of the
    /// application's, e.g. task-local values naming the client its database time is charged to.
    public typealias RequestScope = @Sendable (Request, @Sendable () async -> Response) async -> Response
    private let scope: RequestScope?

    private var daemon: MicroHTTPDDaemon?
    private let suspended = Mutex<[ObjectIdentifier: (RequestContext, ConnectionHandle)]>([:])
    private let draining = Atomic<Bool>(false)
    /// Streamed answers still being written.
    private let streams = Mutex<[ObjectIdentifier: EventStream]>([:])
    /// Reads the connections upgraded to WebSockets.
    let webSockets = WebSocketReactor()

    /// - Parameters:
    ///   - logger: for failures (an error turned into a 500, the server's own events).
    ///   - observer: called once per answered request, on the thread that answered it; must be fast. This is
    ///     where requests are logged and measured: the server itself writes no line per request.
    ///   - classify: see `Classify`; by default only `Failure` and `FailureConvertible` errors are known.
    public init(
        configuration: HTTPServerConfiguration, router: Router, logger: Logger,
        observer: (@Sendable (CompletedRequest) -> Void)? = nil,
        classify: @escaping Classify = { ($0 as? Failure) ?? ($0 as? any FailureConvertible)?.failure ?? .internal },
        scope: RequestScope? = nil
    ) {
        self.scope = scope
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.observer = observer
        self.classify = classify
        self.connectionGuard = ConnectionGuard(limits: configuration, logger: logger)
        self.overloadWarnings = RateLimitedWarning(logger: logger, interval: .seconds(10))
    }

    /// The port the server listens on (useful after asking for port 0).
    public var port: Int { daemon?.port ?? 0 }

    /// Binds and starts serving.
    public func start() throws {
        precondition(daemon == nil, "server already started")
        let settings = DaemonSettings(
            host: configuration.host, port: configuration.port, threadPoolSize: configuration.eventThreads,
            connectionTimeoutSeconds: configuration.connectionTimeoutSeconds,
            connectionMemoryLimit: configuration.connectionMemoryLimit,
            connectionLimit: configuration.connectionLimit + 64)
        daemon = try MicroHTTPDDaemon(settings: settings, server: self)
        connectionGuard.startReaper()
        lingeringClose.start()
        webSockets.start()
        if !configuration.trustedProxies.addresses.isEmpty {
            logger.notice(
                "trusted proxies are exempt from the per-address connection limits",
                metadata: ["proxies": .string(configuration.trustedProxies.addresses.sorted().joined(separator: ","))])
        }
    }

    /// Stops accepting connections, lets requests in flight finish (at most the grace period), then closes
    /// everything. Requests still running after the grace period are answered `503`.
    public func shutdown() async {
        guard let daemon else { return }
        // Stop accepting: connections accepted from now on are closed at once (see `acceptsConnections`). Not
        // MHD_quiesce_daemon: with a thread pool on epoll it races the worker threads, which take the listening
        // socket out of their epoll sets themselves, and then aborts the process ("Failed to remove listen FD
        // from epoll set"), as the test suite once saw.
        draining.store(true, ordering: .relaxed)
        let deadline = ContinuousClock.now + configuration.shutdownGracePeriod
        while inFlightCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        // WebSockets close (MHD owns their sockets and must get them back before it stops).
        await webSockets.stop()
        // Streams end (their connections resumed, as MHD requires of every suspended one before it stops).
        let open = streams.withLock { Array($0.values) }
        for stream in open { stream.finish() }
        // MHD requires every suspended connection to be resumed before it stops.
        let leftovers = suspended.withLock { Array($0.values) }
        for (state, connection) in leftovers
        where state.finish(with: HTTPError.serviceUnavailable("The server is shutting down").response) {
            forget(state)
            connection.resume()
        }
        // Give the event threads a moment to flush those answers.
        if !leftovers.isEmpty || !open.isEmpty { try? await Task.sleep(for: .milliseconds(100)) }
        daemon.stop()
        connectionGuard.stop()
        lingeringClose.stop()
        self.daemon = nil
    }

    /// Bytes of request bodies buffered now (for metrics and tests).
    public var bufferedBodyBytes: Int { connectionGuard.bufferedBodyBytes }

    /// Connections closing with a lingering close now (for tests).
    public var lingeringConnections: Int { lingeringClose.count }

    /// Streamed answers being written now.
    public var openStreams: Int { streams.withLock { $0.count } }

    /// Connections upgraded to WebSockets now.
    public var openWebSockets: Int { webSockets.count }

    /// Requests whose handlers are running.
    public var inFlightCount: Int { suspended.withLock { $0.count } }

    // MARK: - Called by the MHD trampolines, on event threads.

    /// False once shutdown began: connections accepted from then on are closed at once.
    var acceptsConnections: Bool { !draining.load(ordering: .relaxed) }

    func begin(connection: ConnectionHandle, method: String, path: String, nulInPath: Bool) -> RequestContext {
        let method = HTTPMethod(rawValue: method)
        // A path cut short at a decoded NUL must not reach the route of its prefix.
        let lookup = nulInPath ? .notFound : router.lookup(method: method, path: path)
        let requestID =
            connection.header("X-Request-Id").flatMap { RequestID.isAcceptable($0) ? $0 : nil } ?? RequestID.generate()
        return RequestContext(
            method: method, path: path, requestID: requestID, lookup: lookup,
            bodyLimit: lookup.route?.policy.bodyLimit ?? Route.defaultMaxBodySize)
    }

    /// Everything decided from the headers, before a byte of the body is read: framing that could smuggle a
    /// request behind a proxy (`400`), the route (`404`/`405`), its policy's size limit (`413`) and credentials
    /// (e.g. `401`, in the route's dialect) and the body budget (`503`). An answer here makes MHD close the
    /// connection after it.
    func afterHeaders(_ state: RequestContext, connection: ConnectionHandle) -> Bool {
        let contentLength = connection.header("Content-Length")
        let chunked = connection.header("Transfer-Encoding") != nil
        let tracked = connection.tracked
        let expectsBody = contentLength != nil || chunked
        if let tracked, !connectionGuard.headersReceived(tracked, expectsBody: expectsBody) { return false }
        guard expectsBody else { return true }
        let admitted = admitBody(state, connection: connection, contentLength: contentLength, chunked: chunked)
        // Answered before the body was read: the client may still be sending it when the answer goes out.
        if state.responded || state.isRunning { tracked?.lingers.store(true, ordering: .relaxed) }
        return admitted
    }

    private func admitBody(
        _ state: RequestContext, connection: ConnectionHandle, contentLength: String?, chunked: Bool
    ) -> Bool {
        let tracked = connection.tracked
        if chunked && contentLength != nil || connection.headerCount("Content-Length") > 1
            || connection.headerCount("Transfer-Encoding") > 1
        {
            return send(
                HTTPError.badRequest("Conflicting Content-Length and Transfer-Encoding headers").response, for: state,
                on: connection)
        }
        var declared = 0
        if let contentLength {
            guard !contentLength.isEmpty, contentLength.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                let value = Int(contentLength)
            else {
                // MHD has answered this itself already; just make sure nothing else is written.
                return false
            }
            declared = value
        }
        guard declared > 0 || chunked else { return true }
        // Unrouted requests are answered from their headers.
        guard let route = state.lookup.route else { return bodyComplete(state, connection: connection) }
        if declared > state.bodyLimit {
            return refuseLater(tooLarge(state, route: route, connection: connection), for: state, on: connection)
        }
        let head = headRequest(state, route: route, connection: connection)
        let credentials: Verified
        do {
            credentials = try route.policy.authentication.verify(head)
            // A chunked body is bounded by its route's limit only.
            let large = (chunked ? state.bodyLimit : declared) > configuration.smallBodyLimit
            guard !large || credentials.mayStreamLargeBodies else {
                let limit = configuration.smallBodyLimit
                throw Failure.forbidden("A request body over \(limit) bytes needs a signed-in user's access token")
            }
        } catch {
            let refusal = render(error, request: head, dialect: route.policy.dialect)
            return Self.isDelayedRefusal(refusal)
                ? refuseLater(refusal, for: state, on: connection) : send(refusal, for: state, on: connection)
        }
        state.credentials = credentials
        let small =
            configuration.smallBodyReserve > 0 && (chunked ? state.bodyLimit : declared) <= configuration.smallBodyLimit
        let share: BodyShare =
            state.bodyLimit <= configuration.connectionBodyAllowance
            ? .connection : small ? .small : .large(account: credentials.account)
        // Charged as the bytes arrive; a declared length that could not fit now is refused from the headers.
        if let tracked, !connectionGuard.reserveBody(declared, for: tracked, in: share, charge: false) {
            return send(Self.tooManyBodies.response, for: state, on: connection)
        }
        state.tracked = tracked
        state.bodyShare = share
        return true
    }

    /// The body budget is spent (`ConnectionGuard.reserveBody`).
    private static let tooManyBodies = HTTPError.serviceUnavailable("Too many request bodies in flight; retry shortly")

    /// The client's address: the peer's, or the one a trusted proxy forwarded. Every `X-Forwarded-For` field
    /// counts, in order (a client may send its own before the proxy appends another).
    private func clientAddress(of connection: ConnectionHandle) -> String {
        let peer = connection.clientAddress()
        guard configuration.trustedProxies.addresses.contains(peer) else { return peer }
        let forwarded = connection.headers().fields.filter { $0.name.lowercased() == "x-forwarded-for" }.map(\.value)
        return configuration.trustedProxies.client(
            peer: peer, forwardedFor: forwarded.isEmpty ? nil : forwarded.joined(separator: ","))
    }

    /// The request as known from its headers (no body), for the credentials check.
    private func headRequest(_ state: RequestContext, route: Route, connection: ConnectionHandle) -> Request {
        let parameters: [String: String] = if case .found(_, let found) = state.lookup { found } else { [:] }
        return Request(
            method: state.method, path: state.path, headers: connection.headers(), pathParameters: parameters,
            routePattern: route.pattern, requestID: state.requestID, clientAddress: clientAddress(of: connection))
    }

    /// The `413` for a body over the route's limit, in the route's dialect.
    private func tooLarge(_ state: RequestContext, route: Route, connection: ConnectionHandle) -> Response {
        let head = headRequest(state, route: route, connection: connection)
        return render(Failure.payloadTooLarge(limit: state.bodyLimit), request: head, dialect: route.policy.dialect)
    }

    /// Appends a body chunk, counted against its share; false closes the connection. A body past its route's
    /// limit or its share (a chunked one declares no length) is answered at once, before the rest is read.
    func receive(_ chunk: UnsafeRawBufferPointer, for state: RequestContext, connection: ConnectionHandle) -> Bool {
        // Only a routed request reads a body (others are answered from their headers).
        guard !state.responded, let route = state.lookup.route else { return true }
        if state.body.count + chunk.count > state.bodyLimit {
            return answerMidBody(tooLarge(state, route: route, connection: connection), for: state, on: connection)
        }
        if let tracked = state.tracked {
            connectionGuard.bodyArrived(chunk.count, on: tracked)
            guard connectionGuard.reserveBody(chunk.count, for: tracked, in: state.bodyShare) else {
                return answerMidBody(Self.tooManyBodies.response, for: state, on: connection)
            }
        }
        state.body.append(contentsOf: chunk)
        return true
    }

    /// The whole request is in (or a handler finished and the connection was resumed).
    func bodyComplete(_ state: RequestContext, connection: ConnectionHandle) -> Bool {
        if state.responded { return true }
        if let finished = state.takeFinishedResponse() {
            return send(finished, for: state, on: connection)
        }
        if state.isRunning { return true }
        if let tracked = connection.tracked { connectionGuard.handling(tracked) }
        switch state.lookup {
        case .notFound:
            return send(
                HTTPError.notFound("No route for \(state.method) \(state.path)").response, for: state, on: connection)
        case .methodNotAllowed(let allowed):
            return send(HTTPError.methodNotAllowed(allowed: allowed).response, for: state, on: connection)
        case .found(let route, let parameters):
            let request = Request(
                method: state.method, path: state.path, query: connection.queryArguments(),
                headers: connection.headers(),
                body: state.body, pathParameters: parameters, routePattern: route.pattern, requestID: state.requestID,
                clientAddress: clientAddress(of: connection), peerAddress: connection.clientAddress())
            state.body = []
            // A decoded %00 would be cut short by every C API downstream (libpq included): refuse it here. (Checked
            // on the UTF-8 bytes: `String.contains("\0")` resolves to Foundation's substring search, slow for a
            // check on every field.)
            if let field = request.query.first(where: { $0.name.utf8.contains(0) || $0.value.utf8.contains(0) }) {
                let name = field.name.utf8.contains(0) ? "query" : field.name
                return send(
                    HTTPError.validation(field: name, "must not contain NUL characters").response, for: state,
                    on: connection)
            }
            // Credentials are verified once: from the headers before the body (kept), or here for a bodiless request.
            var admitted = request
            do {
                let credentials = try state.credentials ?? route.policy.authentication.verify(request)
                admitted.caller = credentials.caller
                admitted.account = credentials.account
                if route.policy.authentication.resolve == nil, let immediate = route.pipeline.immediate,
                    let response = try immediate(admitted)
                {
                    return send(response, for: state, on: connection)
                }
                runDeferred(route, credentials: credentials, request: admitted, state: state, connection: connection)
            } catch {
                return send(render(error, request: admitted, dialect: route.policy.dialect), for: state, on: connection)
            }
            return true
        }
    }

    /// Completes the credentials check (`Authentication.resolve`, e.g. the session is live), then runs the route's
    /// stages and handler with the caller (`Route.pipeline`); whatever any throws is answered in the route's dialect.
    private func runDeferred(
        _ route: Route, credentials: Verified, request: Request, state: RequestContext, connection: ConnectionHandle
    ) {
        let delay = configuration.refusalDelay
        answerLater(state, on: connection) {
            let work: @Sendable () async -> Response = {
                var request = request
                do {
                    if let resolve = route.policy.authentication.resolve {
                        request.caller = try await resolve(request, credentials)
                    }
                    return try await route.pipeline.deferred(request)
                } catch {
                    return self.render(error, request: request, dialect: route.policy.dialect)
                }
            }
            let response: Response
            if let scope = self.scope { response = await scope(request, work) } else { response = await work() }
            if Self.isDelayedRefusal(response) { try? await Task.sleep(for: delay) }
            return response
        }
    }

    /// Suspends the connection while `work` runs as a task; its response is sent after the resume.
    private func answerLater(
        _ state: RequestContext, on connection: ConnectionHandle, _ work: @escaping @Sendable () async -> Response
    ) {
        state.markRunning()
        suspended.withLock { $0[ObjectIdentifier(state)] = (state, connection) }
        // Suspend before the task starts, so its resume can never come first.
        connection.suspend()
        Task(executorPreference: InlineTaskExecutor.shared) {
            let response = await work()
            if state.finish(with: response) {
                self.forget(state)
                connection.resume()
            }
        }
    }

    /// A client over a limit (`429`), sending what no route takes (`413`) or past another bound is answered a
    /// while later.
    private static func isDelayedRefusal(_ response: Response) -> Bool {
        response.status == 429 || response.status == 413 || response.isRefusalPastABound
    }

    /// Sends `refusal`, decided from the headers, after `refusalDelay`: the connection stays suspended meanwhile
    /// (MHD reads nothing from it), and after the resume MHD calls back with no body and `bodyComplete` sends it.
    private func refuseLater(_ refusal: Response, for state: RequestContext, on connection: ConnectionHandle) -> Bool {
        let delay = configuration.refusalDelay
        guard delay > .zero else { return send(refusal, for: state, on: connection) }
        answerLater(state, on: connection) {
            try? await Task.sleep(for: delay)
            return refusal
        }
        return true
    }

    private func forget(_ state: RequestContext) {
        _ = suspended.withLock { $0.removeValue(forKey: ObjectIdentifier(state)) }
    }

    /// Turns any error into its answer: classified once, rendered in the route's dialect. The one place where
    /// that happens.
    private func render(_ error: any Error, request: Request, dialect: any ErrorDialect) -> Response {
        let failure = classify(error)
        let response = dialect.render(failure, thrown: error, for: request)
        if failure.status == 503 {
            // Overload (a full queue, the database away) is expected under attack: counted, not logged per request.
            overloadWarnings.note("requests answered 503 (overloaded or unavailable)")
        } else if failure == .internal && response.status >= 500 {
            // A bug. A surface's own error that its dialect answers with a client status (PostgREST's 400 for a
            // malformed filter) is the client's: logging it would let any client write error lines at will.
            logger.error(
                "request failed",
                metadata: [
                    "request_id": .string(request.requestID), "route": .string(request.routePattern),
                    "error": .string(String(describing: error)),
                ])
        }
        return response
    }

    private func send(_ response: Response, for state: RequestContext, on connection: ConnectionHandle) -> Bool {
        let response = finished(response, for: state, on: connection)
        let queued: Bool
        if let upgrade = response.upgrade {
            state.upgrade = (upgrade, clientAddress(of: connection))
            queued = connection.queueUpgrade(response, server: self)
        } else {
            queued = response.stream.map { stream(response, $0, on: connection) } ?? connection.queue(response)
        }
        observe(response, for: state)
        return queued
    }

    /// Queues a streamed answer and keeps its stream until its connection closes, so a shutdown can end it.
    private func stream(_ response: Response, _ stream: EventStream, on connection: ConnectionHandle) -> Bool {
        let key = ObjectIdentifier(stream)
        streams.withLock { $0[key] = stream }
        stream.onClose { [weak self] in _ = self?.streams.withLock { $0.removeValue(forKey: key) } }
        if let tracked = connection.tracked {
            let connectionGuard = self.connectionGuard
            stream.attach { connectionGuard.cut(tracked) }
        }
        return connection.queue(response, streaming: stream)
    }

    /// MHD sent the `101` of `state`: its socket is a WebSocket from now on.
    func upgraded(
        _ state: RequestContext, socket: Int32, handle: UpgradeHandle, initial: [UInt8], tracked: TrackedConnection?
    ) {
        guard let (upgrade, address) = state.upgrade else { return handle.close() }
        state.upgrade = nil
        guard acceptsConnections else {
            upgrade.abandoned?()
            return handle.close()
        }
        if let tracked {
            tracked.upgraded.store(true, ordering: .relaxed)
            tracked.setDeadline(after: nil)
        }
        let connection = WebSocketConnection(
            socket: socket, upgrade: handle, address: address, settings: upgrade.settings, reactor: webSockets)
        webSockets.adopt(connection, handler: upgrade.open(connection), initial: initial)
    }

    /// Answers while the body is still arriving (libmicrohttpd queues no response then): the answer is written
    /// to the socket as is, and the connection closes with a lingering close so that the client reads it.
    private func answerMidBody(_ response: Response, for state: RequestContext, on connection: ConnectionHandle)
        -> Bool
    {
        var response = finished(response, for: state, on: connection)
        response.headers.set("Connection", "close")
        connection.tracked?.lingers.store(true, ordering: .relaxed)
        state.body = []
        connection.writeAndClose(response)
        observe(response, for: state)
        return false
    }

    private func finished(_ response: Response, for state: RequestContext, on connection: ConnectionHandle)
        -> Response
    {
        var response = ResponseEncoding.finish(response, method: state.method, requestHeader: connection.header)
        response.headers.set("X-Request-Id", state.requestID)
        // Bodies are never to be sniffed into another type (an uploaded image could hold HTML).
        response.headers.set("X-Content-Type-Options", "nosniff")
        state.responded = true
        return response
    }

    private func observe(_ response: Response, for state: RequestContext) {
        observer?(
            CompletedRequest(
                method: state.method, route: state.lookup.route?.pattern ?? "unmatched", status: response.status,
                duration: ContinuousClock.now - state.startedAt, requestID: state.requestID,
                delayedRefusal: configuration.refusalDelay > .zero && Self.isDelayedRefusal(response)))
    }
}
