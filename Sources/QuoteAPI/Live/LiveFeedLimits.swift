/// How many live-change streams may be open and how they are kept alive (`GET /v1/sync/events`).
public struct LiveFeedLimits: Sendable {
    /// Streams one user may hold open at once (on this instance): a few devices, each with a tab or two.
    public var perUser = 8
    /// Streams open from one IP address (on this instance), counted after `TRUSTED_PROXIES`.
    public var perAddress = 32
    /// A comment line is sent this often on every stream; each time, the streams' sessions are checked too.
    public var keepAlive: Duration = .seconds(15)
    /// Bytes a stream may have waiting for its client before the client counts as too slow and is cut off.
    public var bufferLimit = 64 * 1024
    /// What a refused stream is told to wait (`Retry-After`).
    public var retryAfterSeconds = 30

    public init() {}
}

extension AppConfiguration {
    /// `liveFeed.keepAlive` in whole seconds, for the environment.
    public var liveFeedKeepAliveSeconds: Int {
        get { Int(liveFeed.keepAlive.components.seconds) }
        set { liveFeed.keepAlive = .seconds(newValue) }
    }
}
