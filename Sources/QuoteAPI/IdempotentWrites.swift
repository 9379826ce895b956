import AuthJWT
import Foundation
import HTTPServer
import QuoteVault

/// `Idempotency-Key` on every route whose policy lists its stage (`V1Policies.userWrite`: the signed-in `/v1`
/// writes).
///
/// Within 24 hours the same key from the same user with the same method, path and body gets the first answer
/// again with `Idempotent-Replayed: true` and runs nothing; another request under the key gets
/// `422 idempotency_key_reused`. A request arriving while the first with its key still runs waits for that
/// answer (up to `maximumWait`, then `409 conflict` with `Retry-After`), so two at once run once.
/// Answers of 5xx and 429 are not kept (the key is released: a retry runs again). Every refusal, and a failure
/// kept for replay, is in the route's dialect.
struct IdempotentWrites {
    static let header = "Idempotency-Key"
    static let maximumWait: Duration = .seconds(10)
    static let stageName = "idempotency"

    let store: IdempotencyStore

    /// The stage; on the event thread (`Handler.immediate`) only requests without a key pass.
    var stage: Stage {
        Stage(
            Self.stageName,
            immediate: { request, _, next in request.headers[Self.header] == nil ? try next(request) : nil },
            run: { request, route, next in try await run(request, route, next) })
    }

    private func run(_ request: Request, _ route: Route, _ handler: Stage.Next) async throws -> Response {
        guard let key = request.headers[Self.header] else { return try await handler(request) }
        let user = try request.caller(AuthenticatedUser.self)
        guard IdempotencyStore.isValidKey(key) else {
            throw HTTPError.validation(
                field: Self.header, "must be 1 to \(IdempotencyStore.maximumKeyLength) visible ASCII characters")
        }
        let fingerprint = Digest.sha256(Array("\(request.method.rawValue)\n\(request.path)\n".utf8) + request.body)

        let deadline = ContinuousClock.now + Self.maximumWait
        var pause = Duration.milliseconds(10)
        while true {
            switch try await store.claim(userID: user.userID, key: key, fingerprint: fingerprint) {
            case .claimed:
                return try await runFirst(request, route, handler, userID: user.userID, key: key)
            case .replay(let stored):
                var response = Response(status: stored.status, body: stored.body)
                if let type = stored.contentType { response.headers.set("Content-Type", type) }
                response.headers.set("Idempotent-Replayed", "true")
                return response
            case .mismatch:
                throw Failure.idempotencyKeyReused
            case .inProgress:
                guard ContinuousClock.now + pause < deadline else {
                    throw Failure.conflict(
                        "A request with this Idempotency-Key is still in progress", retryAfterSeconds: 1)
                }
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(200))
            }
        }
    }

    /// Runs the request that claimed the key and stores its answer (or releases the key for a retry).
    private func runFirst(
        _ request: Request, _ route: Route, _ handler: Stage.Next, userID: UUID, key: String
    ) async throws -> Response {
        let response: Response
        do {
            response = try await handler(request)
        } catch {
            await keep(
                route.policy.dialect.render(Failure(classifying: error), thrown: error, for: request),
                userID: userID, key: key)
            throw error
        }
        await keep(response, userID: userID, key: key)
        return response
    }

    /// Storing is best effort: the write already happened, and its answer must reach the client. An answer that
    /// could not be stored leaves the key claimed until the lease ends (then a retry runs again).
    private func keep(_ response: Response, userID: UUID, key: String) async {
        if response.status >= 500 || response.status == 429 {
            try? await store.release(userID: userID, key: key)
        } else {
            try? await store.complete(
                userID: userID, key: key,
                IdempotencyStore.StoredResponse(
                    status: response.status, contentType: response.headers["Content-Type"], body: response.body))
        }
    }
}

extension RoutePolicy {
    /// Whether `Idempotency-Key` is honoured: the policy lists `IdempotentWrites`' stage.
    public var idempotent: Bool { stages.contains { $0.name == IdempotentWrites.stageName } }
}
