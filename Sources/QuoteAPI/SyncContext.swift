import Logging
import PGClient
import QuoteVault

/// What offline sync needs: the change feed, its tokens, idempotency keys and the background pruning.
public struct SyncContext: Sendable {
    public let feed: SyncFeed
    public let tokens: SyncToken.Codec
    public let idempotency: IdempotencyStore
    public let maintenance: SyncMaintenance

    public init(pool: PGPool, secret: [UInt8], logger: Logger) {
        feed = SyncFeed(pool: pool)
        tokens = SyncToken.Codec(secret: secret)
        idempotency = IdempotencyStore(pool: pool)
        maintenance = SyncMaintenance(pool: pool, logger: logger)
    }
}
