import Foundation
import Synchronization

/// The state of one request between libmicrohttpd's callbacks.
///
/// Lifecycle: made on the access handler's first call (headers read) and kept in MHD's `req_cls`; the body
/// accumulates on later calls (always on the connection's event thread); an async handler's response is handed
/// over from its task through `completion`; released by the request-completed callback.
final class RequestContext: @unchecked Sendable {
    // @unchecked: the fields other than `completion` (a `Mutex`) are touched only on the connection's event
    // thread.
    let method: HTTPMethod
    let path: String
    let requestID: String
    let startedAt: ContinuousClock.Instant
    let lookup: RouteLookup
    let bodyLimit: Int

    var body: [UInt8] = []
    var responded = false
    /// The connection's guard record and the share the body's bytes are counted against as they arrive
    /// (released when the request completes).
    var tracked: TrackedConnection?
    var bodyShare = BodyShare.connection
    /// What the route's authentication verified from the headers, before the body (not verified again).
    var credentials: Verified?
    /// A `101` queued for this request: what the connection becomes once MHD has sent it, and the client's address.
    var upgrade: (WebSocketUpgrade, address: String)?

    private let completion = Mutex(Completion.notStarted)

    private enum Completion {
        case notStarted
        case running
        case finished(Response)
        case delivered
    }

    init(method: HTTPMethod, path: String, requestID: String, lookup: RouteLookup, bodyLimit: Int) {
        self.method = method
        self.path = path
        self.requestID = requestID
        self.startedAt = .now
        self.lookup = lookup
        self.bodyLimit = bodyLimit
    }

    /// Marks the async handler as started (the connection is about to be suspended).
    func markRunning() {
        completion.withLock { $0 = .running }
    }

    /// Hands over the handler's response. True for the first caller only: that caller must resume the connection.
    func finish(with response: Response) -> Bool {
        completion.withLock { completion in
            guard case .running = completion else { return false }
            completion = .finished(response)
            return true
        }
    }

    /// The response to send after a resume, once.
    func takeFinishedResponse() -> Response? {
        completion.withLock { completion in
            guard case .finished(let response) = completion else { return nil }
            completion = .delivered
            return response
        }
    }

    var isRunning: Bool {
        completion.withLock { if case .running = $0 { true } else { false } }
    }
}
