import AuthJWT
import HTTPServer
import Logging
import PGClient
import QuoteVault

/// What route handlers need: the configuration, the database and the services built on it.
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

    /// The caller of an authenticated route; `401 unauthorized` otherwise.
    public func authenticate(_ request: Request) async throws -> AuthenticatedUser {
        try await authenticator.authenticate(request.bearerToken)
    }
}
