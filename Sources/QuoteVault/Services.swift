import AuthJWT
import Logging
import PGClient

/// The services every surface runs on, built once over the database pools by the composition root: a user, a
/// session or a row is the same whichever door (`/v1`, Supabase's) touched it.
public struct Services: Sendable {
    public let pool: PGPool
    /// Connections of public reads on the primary, apart from `pool`'s (`DB_PUBLIC_POOL_SIZE`).
    public let publicPool: PGPool
    /// Public reads (quotes, search, categories, stored quotes of the day): replicas when configured, falling back
    /// to `publicPool`; else `publicPool`.
    public let readPool: PGPool
    public let migrator: Migrator
    public let signer: JWTSigner
    public let authenticator: Authenticator
    public let hashing: PasswordHashingQueue
    public let mail: MailDelivery
    public let housekeeping: AccountHousekeeping
    public let quotes: QuoteService
    public let search: QuoteSearch
    public let quoteOfTheDay: QuoteOfTheDay
    public let accounts: AccountService
    public let recovery: PasswordRecovery
    public let profiles: ProfileService
    public let favorites: FavoritesService
    public let collections: CollectionsService

    /// - Parameters:
    ///   - secret: the server's JWT key, which also signs the quote list's cursors.
    ///   - rateLimits: whether logins, sign-ups and resets are throttled (`RATE_LIMITS`).
    ///   - resetLinkBase: the link in `/v1`'s password-reset mails.
    ///   - publicURL: this server's public base URL, for avatar URLs.
    public init(
        pool: PGPool, publicPool: PGPool, readPool: PGPool, migrator: Migrator, secret: [UInt8],
        hashing: PasswordHashingQueue, sessions: SessionIssuer, mail: MailDelivery, housekeeping: AccountHousekeeping,
        rateLimits: Bool,
        resetLinkBase: String, publicURL: String
    ) {
        self.pool = pool
        self.publicPool = publicPool
        self.readPool = readPool
        self.migrator = migrator
        self.signer = sessions.signer
        self.authenticator = Authenticator(signer: signer, pool: pool)
        self.hashing = hashing
        self.mail = mail
        self.housekeeping = housekeeping
        quotes = QuoteService(pool: readPool, cursorSecret: secret)
        search = QuoteSearch(pool: readPool)
        quoteOfTheDay = QuoteOfTheDay(pool: pool, readPool: readPool)
        accounts = AccountService(
            pool: pool, hashing: hashing, sessions: sessions, limits: RateLimiter(enabled: rateLimits),
            resetLinkBase: resetLinkBase)
        recovery = PasswordRecovery(
            pool: pool, hashing: hashing, sessions: sessions, limits: RateLimiter(enabled: rateLimits))
        profiles = ProfileService(pool: pool, publicURL: publicURL)
        favorites = FavoritesService(pool: pool)
        collections = CollectionsService(pool: pool)
    }
}
