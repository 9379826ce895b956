import Logging
import PGClient
import QuoteVault

/// What route handlers need: the configuration, the database and the services built on it.
public struct AppContext: Sendable {
    public let configuration: AppConfiguration
    public let pool: PGPool
    public let migrator: Migrator
    public let logger: Logger
}
