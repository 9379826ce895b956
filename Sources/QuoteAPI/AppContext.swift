import HTTPServer
import Logging
import QuoteVault

/// What the `/v1` and operations routes need: the configuration and the services (built once by the composition
/// root, `QuoteApp`, and shared with the Supabase surface); `context.accounts` is `context.services.accounts`.
@dynamicMemberLookup
public struct AppContext: Sendable {
    public let configuration: AppConfiguration
    public let services: Services
    public let metrics: ServerMetrics
    /// Whether the instance is being taken out of rotation before it stops.
    public let drain = DrainState()
    public let logger: Logger
    public let sync: SyncContext
    /// The open streams of live changes (`GET /v1/sync/events`).
    public let live: LiveFeed

    public init(
        configuration: AppConfiguration, services: Services, metrics: ServerMetrics, logger: Logger, sync: SyncContext
    ) {
        self.configuration = configuration
        self.services = services
        self.metrics = metrics
        self.logger = logger
        self.sync = sync
        self.live = LiveFeed(
            limits: configuration.liveFeed, sync: sync, authenticator: services.authenticator, logger: logger)
    }

    @inlinable public subscript<Value>(dynamicMember keyPath: KeyPath<Services, Value>) -> Value {
        services[keyPath: keyPath]
    }
}
