import AuthJWT
import HTTPServer
import Logging
import PGClient
import QuoteVault

/// What the `/v1` and operations routes need: the configuration, the database and the services built on it
/// (by the composition root, `QuoteApp`).
public struct AppContext: Sendable {
    public let configuration: AppConfiguration
    public let pool: PGPool
    /// Connections of public reads on the primary, apart from `pool`'s (`DB_PUBLIC_POOL_SIZE`).
    public let publicPool: PGPool
    /// Public reads (quotes, search, categories, stored quotes of the day): replicas when configured, falling back
    /// to `publicPool`; else `publicPool`.
    public let readPool: PGPool
    public let migrator: Migrator
    public let signer: JWTSigner
    public let authenticator: Authenticator
    public let quotes: QuoteService
    public let search: QuoteSearch
    public let quoteOfTheDay: QuoteOfTheDay
    public let accounts: AccountService
    public let profiles: ProfileService
    public let hashing: PasswordHashingQueue
    public let mail: MailDelivery
    public let favorites: FavoritesService
    public let collections: CollectionsService
    public let metrics: ServerMetrics
    /// Whether the instance is being taken out of rotation before it stops.
    public let drain = DrainState()
    public let logger: Logger
    public let sync: SyncContext

    public init(
        configuration: AppConfiguration, pool: PGPool, publicPool: PGPool, readPool: PGPool, migrator: Migrator,
        signer: JWTSigner, authenticator: Authenticator, quotes: QuoteService, search: QuoteSearch,
        quoteOfTheDay: QuoteOfTheDay, accounts: AccountService, profiles: ProfileService, hashing: PasswordHashingQueue,
        mail: MailDelivery, favorites: FavoritesService, collections: CollectionsService, metrics: ServerMetrics,
        logger: Logger, sync: SyncContext
    ) {
        self.configuration = configuration
        self.pool = pool
        self.publicPool = publicPool
        self.readPool = readPool
        self.migrator = migrator
        self.signer = signer
        self.authenticator = authenticator
        self.quotes = quotes
        self.search = search
        self.quoteOfTheDay = quoteOfTheDay
        self.accounts = accounts
        self.profiles = profiles
        self.hashing = hashing
        self.mail = mail
        self.favorites = favorites
        self.collections = collections
        self.metrics = metrics
        self.logger = logger
        self.sync = sync
    }
}
